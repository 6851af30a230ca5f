//! Generic access to any verilated top by port name.
//!
//! Every top of `rnic_hw::verilog_tops()` is compiled in by the build script
//! together with a C shim; [`Model::new`] instantiates one by name. Ports are
//! resolved once into a [`PortId`]; reads and writes then go straight to the
//! model's port storage (no FFI call, no allocation).

use std::ffi::{c_char, c_void, CString};

/// Direction of a port of a top.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortDir {
    /// Driven by the harness.
    In,
    /// Driven by the model.
    Out,
}

/// A port of a top as declared in its Verilog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Port name.
    pub name: &'static str,
    /// Width in bits.
    pub width: u32,
    /// Direction.
    pub dir: PortDir,
}

/// Waveform entry points of a top (present with the `vcd` or `fst` feature).
#[derive(Clone, Copy)]
#[allow(dead_code)] // only read with the `vcd` or `fst` feature
pub(crate) struct TraceFns {
    pub open: unsafe extern "C" fn(*mut c_void, *const c_char) -> i32,
    pub dump: unsafe extern "C" fn(*mut c_void, u64),
    pub close: unsafe extern "C" fn(*mut c_void),
}

/// The generated entry points and port table of one top.
#[allow(dead_code)] // `set`/`get` are the reference path, used by tests
pub(crate) struct TopInfo {
    pub name: &'static str,
    pub ports: &'static [PortInfo],
    pub new: unsafe extern "C" fn() -> *mut c_void,
    pub free: unsafe extern "C" fn(*mut c_void),
    pub eval: unsafe extern "C" fn(*mut c_void),
    pub port_ptr: unsafe extern "C" fn(*mut c_void, u32) -> *mut c_void,
    pub set: unsafe extern "C" fn(*mut c_void, u32, *const u32),
    pub get: unsafe extern "C" fn(*mut c_void, u32, *mut u32),
    pub trace: Option<TraceFns>,
}

include!(concat!(env!("OUT_DIR"), "/tops.rs"));

/// Names of every top compiled into this build.
pub fn top_names() -> Vec<&'static str> {
    TOPS.iter().map(|t| t.name).collect()
}

/// The port table of a top, if it exists.
pub fn top_ports(name: &str) -> Option<&'static [PortInfo]> {
    TOPS.iter().find(|t| t.name == name).map(|t| t.ports)
}

/// A resolved port: index, width and where its value lives in the model.
#[derive(Clone, Copy, Debug)]
pub struct PortId {
    index: u32,
    width: u32,
    dir: PortDir,
    ptr: *mut c_void,
}

// SAFETY: the pointer is into the model the port was resolved on, and is only
// dereferenced through that model's `&self`/`&mut self` methods (a model is `Send`).
unsafe impl Send for PortId {}

impl PortId {
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Direction.
    pub fn dir(&self) -> PortDir {
        self.dir
    }
    /// Index in the top's port table.
    pub fn index(&self) -> u32 {
        self.index
    }
}

/// Errors of the generic model API.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// No top of that name was compiled in.
    #[error("no verilated top named {0:?} (built: {1:?})")]
    NoTop(String, Vec<&'static str>),
    /// The top has no port of that name.
    #[error("top {top:?} has no port {port:?}")]
    NoPort {
        /// Top name.
        top: String,
        /// Port asked for.
        port: String,
    },
    /// Waveform tracing failed or is not compiled in.
    #[error("trace: {0}")]
    Trace(String),
}

/// A waveform file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveFormat {
    /// Value change dump (`.vcd`), text.
    Vcd,
    /// GTKWave's Fast Signal Trace (`.fst`), compressed.
    Fst,
}

impl WaveFormat {
    /// The format this build of rnic-sim writes: cargo feature `fst` or `vcd` (a
    /// Verilator model traces one format), or None without either.
    pub const BUILT: Option<WaveFormat> = if cfg!(feature = "fst") {
        Some(WaveFormat::Fst)
    } else if cfg!(feature = "vcd") {
        Some(WaveFormat::Vcd)
    } else {
        None
    };

    /// The format a file name asks for, by its extension.
    pub fn of_path(path: &std::path::Path) -> Option<WaveFormat> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "vcd" => Some(WaveFormat::Vcd),
            "fst" => Some(WaveFormat::Fst),
            _ => None,
        }
    }

    /// The file extension and the cargo feature of the format.
    pub fn name(self) -> &'static str {
        match self {
            WaveFormat::Vcd => "vcd",
            WaveFormat::Fst => "fst",
        }
    }
}

/// The cycles a waveform holds, `first..=last` (`last` None: to the end of the run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaveWindow {
    /// First cycle written.
    pub first: u64,
    /// Last cycle written; the file is closed after it.
    pub last: Option<u64>,
}

/// One instance of a verilated top.
pub struct Model {
    info: &'static TopInfo,
    raw: *mut c_void,
    clock: Option<PortId>,
    time: u64,
    tracing: bool,
    /// Half-cycle times of the waveform window, inclusive.
    trace_from: u64,
    trace_to: u64,
}

// SAFETY: a model built without Verilator's --threads has no thread affinity (its eval
// installs its context on the calling thread); `&mut self` keeps one thread in it at a time.
unsafe impl Send for Model {}

/// Mask of the low `width` bits of a u64.
#[inline]
fn mask64(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

impl Model {
    /// Instantiates the top `name` (e.g. "core").
    pub fn new(name: &str) -> Result<Model, ModelError> {
        let info =
            TOPS.iter().find(|t| t.name == name).ok_or_else(|| ModelError::NoTop(name.to_string(), top_names()))?;
        // SAFETY: the constructor returns a fresh, owned model.
        let raw = unsafe { (info.new)() };
        assert!(!raw.is_null(), "model constructor of {name} returned null");
        let mut m = Model { info, raw, clock: None, time: 0, tracing: false, trace_from: 0, trace_to: u64::MAX };
        m.clock = m.port("clock").ok();
        Ok(m)
    }

    /// The top's name.
    pub fn name(&self) -> &'static str {
        self.info.name
    }

    /// Every port of the top, in declaration order.
    pub fn ports(&self) -> &'static [PortInfo] {
        self.info.ports
    }

    /// Resolves a port by name (do this once, outside loops).
    pub fn port(&self, name: &str) -> Result<PortId, ModelError> {
        let (i, p) = self
            .info
            .ports
            .iter()
            .enumerate()
            .find(|(_, p)| p.name == name)
            .ok_or_else(|| ModelError::NoPort { top: self.info.name.into(), port: name.into() })?;
        // SAFETY: index is within the table the shim was generated from.
        let ptr = unsafe { (self.info.port_ptr)(self.raw, i as u32) };
        assert!(!ptr.is_null());
        Ok(PortId { index: i as u32, width: p.width, dir: p.dir, ptr })
    }

    /// Sets an input of up to 64 bits (higher bits of `v` beyond the width are dropped).
    #[inline]
    pub fn set(&mut self, p: PortId, v: u64) {
        debug_assert_eq!(p.dir, PortDir::In, "set on an output port");
        let v = v & mask64(p.width);
        // SAFETY: `ptr` points at the port's storage, whose type follows from
        // its width (Verilator's CData/SData/IData/QData/EData[]).
        unsafe {
            match p.width {
                0..=8 => *(p.ptr as *mut u8) = v as u8,
                9..=16 => *(p.ptr as *mut u16) = v as u16,
                17..=32 => *(p.ptr as *mut u32) = v as u32,
                33..=64 => *(p.ptr as *mut u64) = v,
                _ => {
                    let w = p.ptr as *mut u32;
                    *w = v as u32;
                    *w.add(1) = (v >> 32) as u32;
                    for k in 2..p.width.div_ceil(32) as usize {
                        *w.add(k) = 0;
                    }
                }
            }
        }
    }

    /// Sets an input of any width from little-endian 32-bit words (word 0 = bits 31:0).
    /// Missing words are zero; bits beyond the width are dropped.
    #[inline]
    pub fn set_wide(&mut self, p: PortId, words: &[u32]) {
        debug_assert_eq!(p.dir, PortDir::In, "set_wide on an output port");
        if p.width <= 64 {
            let v = words.first().copied().unwrap_or(0) as u64 | (words.get(1).copied().unwrap_or(0) as u64) << 32;
            self.set(p, v);
            return;
        }
        let n = p.width.div_ceil(32) as usize;
        let top_bits = p.width - 32 * (n as u32 - 1);
        // SAFETY: wide ports are arrays of `n` u32 words.
        let dst = unsafe { std::slice::from_raw_parts_mut(p.ptr as *mut u32, n) };
        for (k, d) in dst.iter_mut().enumerate() {
            *d = words.get(k).copied().unwrap_or(0);
        }
        dst[n - 1] &= mask64(top_bits) as u32;
    }

    /// Reads a port of up to 64 bits (the low 64 bits of a wider one).
    #[inline]
    pub fn get(&self, p: PortId) -> u64 {
        // SAFETY: see `set`.
        unsafe {
            match p.width {
                0..=8 => *(p.ptr as *const u8) as u64,
                9..=16 => *(p.ptr as *const u16) as u64,
                17..=32 => *(p.ptr as *const u32) as u64,
                33..=64 => *(p.ptr as *const u64),
                _ => {
                    let w = p.ptr as *const u32;
                    *w as u64 | (*w.add(1) as u64) << 32
                }
            }
        }
    }

    /// Reads a port of any width into `out` (little-endian 32-bit words); extra words are zeroed.
    #[inline]
    pub fn get_wide(&self, p: PortId, out: &mut [u32]) {
        if p.width <= 64 {
            let v = self.get(p);
            for (k, o) in out.iter_mut().enumerate() {
                *o = match k {
                    0 => v as u32,
                    1 => (v >> 32) as u32,
                    _ => 0,
                };
            }
            return;
        }
        let n = p.width.div_ceil(32) as usize;
        // SAFETY: wide ports are arrays of `n` u32 words.
        let src = unsafe { std::slice::from_raw_parts(p.ptr as *const u32, n) };
        for (k, o) in out.iter_mut().enumerate() {
            *o = src.get(k).copied().unwrap_or(0);
        }
    }

    /// Reads the bytes of a wide port (byte i = bits [8i+7:8i]) into `out`.
    #[inline]
    pub fn get_bytes(&self, p: PortId, out: &mut [u8]) {
        let n = (p.width.div_ceil(8) as usize).min(out.len());
        if p.width <= 64 {
            let v = self.get(p).to_le_bytes();
            out[..n].copy_from_slice(&v[..n]);
            return;
        }
        // SAFETY: the storage is u32 words, little-endian on every host Verilator supports;
        // `n` bytes lie within the ceil(width/32) words.
        let src = unsafe { std::slice::from_raw_parts(p.ptr as *const u8, n) };
        out[..n].copy_from_slice(src);
    }

    /// Sets a wide input from bytes (byte i = bits [8i+7:8i]); missing bytes are zero.
    #[inline]
    pub fn set_bytes(&mut self, p: PortId, bytes: &[u8]) {
        let nb = p.width.div_ceil(8) as usize;
        if p.width <= 64 {
            let mut v = [0u8; 8];
            let n = bytes.len().min(nb);
            v[..n].copy_from_slice(&bytes[..n]);
            self.set(p, u64::from_le_bytes(v));
            return;
        }
        let words = p.width.div_ceil(32) as usize;
        // SAFETY: as in `get_bytes`; the whole word array is written.
        let dst = unsafe { std::slice::from_raw_parts_mut(p.ptr as *mut u8, words * 4) };
        let n = bytes.len().min(nb);
        dst[..n].copy_from_slice(&bytes[..n]);
        dst[n..].fill(0);
        let top_bits = p.width - 32 * (words as u32 - 1);
        let w = p.ptr as *mut u32;
        // SAFETY: last word of the array.
        unsafe { *w.add(words - 1) &= mask64(top_bits) as u32 };
    }

    /// Reference path: sets a port through the generated `_set` C function.
    pub fn set_via_shim(&mut self, p: PortId, words: &[u32]) {
        let n = p.width.div_ceil(32) as usize;
        let mut buf = vec![0u32; n];
        for (k, b) in buf.iter_mut().enumerate() {
            *b = words.get(k).copied().unwrap_or(0);
        }
        // SAFETY: `buf` holds as many words as the port.
        unsafe { (self.info.set)(self.raw, p.index, buf.as_ptr()) }
    }

    /// Reference path: reads a port through the generated `_get` C function.
    pub fn get_via_shim(&self, p: PortId) -> Vec<u32> {
        let mut buf = vec![0u32; p.width.div_ceil(32) as usize];
        // SAFETY: `buf` holds as many words as the port.
        unsafe { (self.info.get)(self.raw, p.index, buf.as_mut_ptr()) };
        buf
    }

    /// Evaluates the model (settles combinational logic, runs edge-triggered blocks).
    #[inline]
    pub fn eval(&mut self) {
        // SAFETY: `raw` is a live model.
        unsafe { (self.info.eval)(self.raw) }
        self.dump();
    }

    /// Drives the clock low and evaluates (first half of a cycle).
    #[inline]
    pub fn clock_low(&mut self) {
        if let Some(c) = self.clock {
            self.set(c, 0);
        }
        self.eval();
    }

    /// Drives the clock high and evaluates: the rising edge (second half of a cycle).
    #[inline]
    pub fn clock_high(&mut self) {
        if let Some(c) = self.clock {
            self.set(c, 1);
        }
        self.time += 1;
        self.eval();
        self.time += 1;
    }

    /// One clock cycle: clock low, eval, clock high, eval.
    #[inline]
    pub fn tick(&mut self) {
        self.clock_low();
        self.clock_high();
    }

    /// Half-cycles evaluated so far (cycle n spans half-cycles 2n and 2n + 1).
    pub fn time(&self) -> u64 {
        self.time
    }

    #[inline]
    fn dump(&mut self) {
        if self.tracing {
            if self.time >= self.trace_from && self.time <= self.trace_to {
                if let Some(t) = self.info.trace {
                    // SAFETY: tracing was opened on this live model. Times in ps: a cycle is CLOCK_PS.
                    unsafe { (t.dump)(self.raw, self.time * (rnic_spec::params::CLOCK_PS / 2)) }
                }
            }
            if self.time >= self.trace_to {
                self.trace_close();
            }
        }
    }

    /// Writes a waveform of `window`'s cycles (counted from the model's
    /// creation) to `path`, whose extension (`.vcd`, `.fst`) must name the
    /// format this build traces ([`WaveFormat::BUILT`]). The time axis is
    /// simulated time in picoseconds, the clock's period per cycle, as in
    /// the pcap capture.
    pub fn trace(&mut self, path: &std::path::Path, window: WaveWindow) -> Result<(), ModelError> {
        let asked = WaveFormat::of_path(path)
            .ok_or_else(|| ModelError::Trace(format!("{}: a waveform file is named .vcd or .fst", path.display())))?;
        let built = WaveFormat::BUILT.ok_or_else(|| {
            ModelError::Trace(format!(
                "{}: waveforms need rnic-sim built with its `{}` feature (cargo --features {}, or rnic-tools' feature of that name)",
                path.display(),
                asked.name(),
                asked.name()
            ))
        })?;
        if asked != built {
            return Err(ModelError::Trace(format!(
                "{}: this build writes {} waveforms (feature `{}`), not {}: name the file .{} or rebuild with the `{}` feature instead",
                path.display(),
                built.name().to_uppercase(),
                built.name(),
                asked.name().to_uppercase(),
                built.name(),
                asked.name()
            )));
        }
        if window.last.is_some_and(|l| l < window.first) {
            return Err(ModelError::Trace(format!("waveform window {}..={:?} is empty", window.first, window.last)));
        }
        let t = self.info.trace.ok_or_else(|| ModelError::Trace("this top was built without tracing".into()))?;
        let c = CString::new(path.to_string_lossy().as_bytes()).map_err(|e| ModelError::Trace(e.to_string()))?;
        // SAFETY: live model, NUL-terminated path.
        if unsafe { (t.open)(self.raw, c.as_ptr()) } != 0 {
            return Err(ModelError::Trace(format!("cannot open {}", path.display())));
        }
        self.trace_from = window.first.saturating_mul(2);
        self.trace_to = window.last.map_or(u64::MAX, |l| l.saturating_mul(2).saturating_add(1));
        self.tracing = true;
        Ok(())
    }

    /// Whether a waveform is being written (opened and its window not yet past).
    pub fn tracing(&self) -> bool {
        self.tracing
    }

    /// Flushes and closes the waveform, if one is open.
    pub fn trace_close(&mut self) {
        if let (true, Some(t)) = (self.tracing, self.info.trace) {
            // SAFETY: live model with an open trace.
            unsafe { (t.close)(self.raw) }
        }
        self.tracing = false;
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        self.trace_close();
        // SAFETY: `raw` came from this top's constructor and is freed once.
        unsafe { (self.info.free)(self.raw) }
    }
}
