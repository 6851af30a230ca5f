//! Verilates every top of `rnic_hw::verilog_tops()` and compiles it with a
//! generated C ABI shim, plus a Rust table of each top's ports
//! (`OUT_DIR/tops.rs`, included by `src/model.rs`).
//!
//! Each top's static library is cached in `OUT_DIR`: when the emitted
//! Verilog and the flags are unchanged, Verilator and the C++ compiler are
//! skipped, so adding one per-block test top does not rebuild the others.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Port direction as parsed from the Verilog.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    In,
    Out,
}

/// One port of module `top`.
struct Port {
    name: String,
    width: u32,
    dir: Dir,
}

/// Verilator flags: every lint warning on and fatal; the waivers, each with
/// its reason, are in `hw/verilator.vlt` (passed with the Verilog).
const VERILATOR_FLAGS: &[&str] = &["--cc", "--top-module", "top", "-Wall", "--no-timing", "-O3"];

/// The lint waiver file, relative to this crate.
const WAIVERS: &str = "../hw/verilator.vlt";

/// C++ optimisation level of the generated model (override: `RNIC_SIM_CXX_OPT`).
/// Measured on the core: -O2 simulates no faster than -O1 (74K cycles/s for
/// two NICs either way) but compiles ~25% slower.
const DEFAULT_CXX_OPT: &str = "1";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../hw/src");
    println!("cargo:rerun-if-changed=../hw/spec/src");
    println!("cargo:rerun-if-changed={WAIVERS}");
    println!("cargo:rerun-if-env-changed=RNIC_SIM_CXX_OPT");
    println!("cargo:rerun-if-env-changed=VERILATOR");

    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let waves = Waves::from_features();
    let opt = std::env::var("RNIC_SIM_CXX_OPT").unwrap_or_else(|_| DEFAULT_CXX_OPT.to_string());
    let verilator = std::env::var("VERILATOR").unwrap_or_else(|_| "verilator".to_string());
    let root = verilator_root(&verilator);
    let version = Command::new(&verilator)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let inc = root.join("include");

    let tops = rnic_hw::verilog_tops();
    let mut pending = Vec::new();
    let mut rust = String::new();
    let mut table = String::from("/// Every verilated top, by name.\npub(crate) static TOPS: &[TopInfo] = &[\n");
    for (name, verilog) in &tops {
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "top name {name:?} must be an identifier"
        );
        let ports = parse_ports(verilog);
        assert!(!ports.is_empty(), "top {name:?}: no ports found in module top");
        pending.extend(verilate_top(&out, &verilator, &version, name, verilog, &ports, waves, &opt));
        emit_rust(&mut rust, &mut table, name, &ports, waves);
    }
    table.push_str("];\n");
    compile_tops(&inc, waves, &opt, &pending);
    println!("cargo:rustc-link-search=native={}", out.display());
    build_runtime(&out, &inc, &version, waves, &opt);
    println!("cargo:rustc-link-lib=stdc++");
    rust.push_str(&table);
    write_if_changed(&out.join("tops.rs"), &rust);
}

/// `VERILATOR_ROOT` as Verilator reports it; fails clearly when Verilator is absent.
fn verilator_root(verilator: &str) -> PathBuf {
    let o = match Command::new(verilator).args(["--getenv", "VERILATOR_ROOT"]).output() {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!("`{verilator} --getenv VERILATOR_ROOT` failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("verilator not found: install it with `apt-get install -y verilator`")
        }
        Err(e) => panic!("cannot run {verilator}: {e}"),
    };
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

/// Ports of `module top`, in declaration order (lines `input wire [N:0] name;`).
fn parse_ports(verilog: &str) -> Vec<Port> {
    let mut in_top = false;
    let mut ports = Vec::new();
    for line in verilog.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("module ") {
            in_top = rest.trim_start().starts_with("top(") || rest.trim_start().starts_with("top ");
            continue;
        }
        if t.starts_with("endmodule") {
            in_top = false;
            continue;
        }
        if !in_top {
            continue;
        }
        let dir = if t.starts_with("input ") {
            Dir::In
        } else if t.starts_with("output ") {
            Dir::Out
        } else {
            continue;
        };
        let decl = t.trim_end_matches(';');
        let mut width = 1;
        let mut name = None;
        for tok in decl.split_whitespace().skip(1) {
            if let Some(range) = tok.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                let (hi, lo) = range.split_once(':').expect("port range [hi:lo]");
                let hi: u32 = hi.parse().expect("numeric port msb");
                let lo: u32 = lo.parse().expect("numeric port lsb");
                width = hi - lo + 1;
            } else if !matches!(tok, "wire" | "reg" | "signed" | "logic") {
                name = Some(tok.to_string());
            }
        }
        let name = name.unwrap_or_else(|| panic!("cannot parse port declaration {t:?}"));
        ports.push(Port { name, width, dir });
    }
    ports
}

/// Writes `contents` unless the file already holds exactly that; true if written.
fn write_if_changed(path: &Path, contents: &str) -> bool {
    if std::fs::read_to_string(path).map(|s| s == contents).unwrap_or(false) {
        return false;
    }
    std::fs::write(path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    true
}

/// The C++ storage type Verilator uses for a port of `width` bits.
fn ctype(width: u32) -> &'static str {
    match width {
        0..=8 => "CData",
        9..=16 => "SData",
        17..=32 => "IData",
        33..=64 => "QData",
        _ => "EData",
    }
}

/// Mask of the low `bits` bits of a 32-bit word (all ones for 32).
fn word_mask(bits: u32) -> String {
    if bits >= 32 {
        "0xffffffffu".into()
    } else {
        format!("0x{:x}u", (1u32 << bits) - 1)
    }
}

/// The waveform format the models trace (cargo features `vcd` and `fst`):
/// Verilator builds a model for one format, so the two features exclude each other.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Waves {
    Off,
    Vcd,
    Fst,
}

impl Waves {
    fn from_features() -> Waves {
        let vcd = std::env::var_os("CARGO_FEATURE_VCD").is_some();
        let fst = std::env::var_os("CARGO_FEATURE_FST").is_some();
        match (vcd, fst) {
            (true, true) => panic!(
                "rnic-sim: the `vcd` and `fst` features exclude each other (a Verilator model traces one format): enable one"
            ),
            (true, false) => Waves::Vcd,
            (false, true) => Waves::Fst,
            (false, false) => Waves::Off,
        }
    }

    fn on(self) -> bool {
        self != Waves::Off
    }

    /// The Verilator trace class.
    fn class(self) -> &'static str {
        if self == Waves::Fst {
            "VerilatedFstC"
        } else {
            "VerilatedVcdC"
        }
    }

    /// The Verilator runtime file of the format.
    fn runtime(self) -> &'static str {
        if self == Waves::Fst {
            "verilated_fst_c.cpp"
        } else {
            "verilated_vcd_c.cpp"
        }
    }
}

/// The C++ shim of one top: `extern "C"` constructor, eval, port access, tracing.
fn shim_cpp(name: &str, ports: &[Port], waves: Waves) -> String {
    let cls = format!("V{name}");
    let f = format!("rnicsim_{name}");
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by rnic-sim's build.rs for top `{name}`.");
    let _ = writeln!(s, "#include \"{cls}.h\"\n#include \"verilated.h\"\n#include <cstdint>");
    if waves.on() {
        let _ = writeln!(s, "#include \"verilated_{}_c.h\"", if waves == Waves::Fst { "fst" } else { "vcd" });
    }
    let _ = writeln!(s, "namespace {{ struct Sim {{ VerilatedContext* ctx; {cls}* m; void* tfp; }}; }}");
    let _ = writeln!(s, "extern \"C\" void* {f}_new() {{");
    let _ = writeln!(s, "  Sim* s = new Sim; s->ctx = new VerilatedContext; s->tfp = nullptr;");
    if waves.on() {
        s.push_str("  s->ctx->traceEverOn(true);\n");
    }
    let _ = writeln!(s, "  s->m = new {cls}(s->ctx, \"top\"); return s; }}");
    let _ = writeln!(s, "extern \"C\" void {f}_free(void* p) {{");
    let _ = writeln!(s, "  Sim* s = static_cast<Sim*>(p);");
    if waves.on() {
        let c = waves.class();
        let _ =
            writeln!(s, "  if (s->tfp) {{ static_cast<{c}*>(s->tfp)->close(); delete static_cast<{c}*>(s->tfp); }}");
    }
    let _ = writeln!(s, "  s->m->final(); delete s->m; delete s->ctx; delete s; }}");
    let _ = writeln!(s, "extern \"C\" void {f}_eval(void* p) {{ static_cast<Sim*>(p)->m->eval(); }}");

    // Pointer to a port's storage: the hot path reads and writes it directly.
    let _ = writeln!(s, "extern \"C\" void* {f}_port_ptr(void* p, uint32_t i) {{\n  {cls}* m = static_cast<Sim*>(p)->m;\n  switch (i) {{");
    for (i, p) in ports.iter().enumerate() {
        if p.width > 64 {
            let _ = writeln!(s, "  case {i}: return m->{}.data();", p.name);
        } else {
            let _ = writeln!(s, "  case {i}: return (void*)&m->{};", p.name);
        }
    }
    s.push_str("  default: return nullptr;\n  }\n}\n");

    let _ = writeln!(s, "extern \"C\" void {f}_set(void* p, uint32_t i, const uint32_t* w) {{\n  {cls}* m = static_cast<Sim*>(p)->m;\n  switch (i) {{");
    for (i, p) in ports.iter().enumerate().filter(|(_, p)| p.dir == Dir::In) {
        let n = &p.name;
        match p.width {
            0..=32 => {
                let _ = writeln!(s, "  case {i}: m->{n} = ({})(w[0] & {}); break;", ctype(p.width), word_mask(p.width));
            }
            33..=64 => {
                let _ = writeln!(
                    s,
                    "  case {i}: m->{n} = (QData)w[0] | ((QData)(w[1] & {}) << 32); break;",
                    word_mask(p.width - 32)
                );
            }
            _ => {
                let words = p.width.div_ceil(32);
                let top_bits = p.width - 32 * (words - 1);
                let _ = writeln!(
                    s,
                    "  case {i}: for (int k = 0; k < {}; ++k) m->{n}[k] = w[k]; m->{n}[{}] = w[{}] & {}; break;",
                    words - 1,
                    words - 1,
                    words - 1,
                    word_mask(top_bits)
                );
            }
        }
    }
    s.push_str("  default: break;\n  }\n}\n");

    let _ = writeln!(s, "extern \"C\" void {f}_get(void* p, uint32_t i, uint32_t* w) {{\n  {cls}* m = static_cast<Sim*>(p)->m;\n  switch (i) {{");
    for (i, p) in ports.iter().enumerate() {
        let n = &p.name;
        match p.width {
            0..=32 => {
                let _ = writeln!(s, "  case {i}: w[0] = m->{n}; break;");
            }
            33..=64 => {
                let _ = writeln!(s, "  case {i}: w[0] = (uint32_t)m->{n}; w[1] = (uint32_t)(m->{n} >> 32); break;");
            }
            _ => {
                let _ = writeln!(
                    s,
                    "  case {i}: for (int k = 0; k < {}; ++k) w[k] = m->{n}[k]; break;",
                    p.width.div_ceil(32)
                );
            }
        }
    }
    s.push_str("  default: break;\n  }\n}\n");

    if waves.on() {
        let c = waves.class();
        // Times are dumped in picoseconds, so the waveform's time axis is the simulated clock's.
        let _ = writeln!(
            s,
            "extern \"C\" int {f}_trace_open(void* p, const char* path) {{\n  Sim* s = static_cast<Sim*>(p);\n  if (s->tfp) return 0;\n  {c}* t = new {c}; s->m->trace(t, 99);\n  t->set_time_unit(\"1ps\"); t->set_time_resolution(\"1ps\"); t->open(path);\n  if (!t->isOpen()) {{ delete t; return -1; }}\n  s->tfp = t; return 0; }}"
        );
        let _ = writeln!(
            s,
            "extern \"C\" void {f}_trace_dump(void* p, uint64_t t) {{ Sim* s = static_cast<Sim*>(p); if (s->tfp) static_cast<{c}*>(s->tfp)->dump(t); }}"
        );
        let _ = writeln!(
            s,
            "extern \"C\" void {f}_trace_close(void* p) {{ Sim* s = static_cast<Sim*>(p); if (s->tfp) {{ static_cast<{c}*>(s->tfp)->close(); delete static_cast<{c}*>(s->tfp); s->tfp = nullptr; }} }}"
        );
    }
    s
}

/// A `cc::Build` with the flags Verilator's generated code expects.
fn cxx(inc: &Path, waves: Waves, opt: &str) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .cpp_link_stdlib(None)
        .std("c++17")
        .include(inc)
        .include(inc.join("vltstd"))
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TRACE", if waves.on() { "1" } else { "0" })
        .define("VM_TRACE_FST", if waves == Waves::Fst { "1" } else { "0" })
        .define("VM_TRACE_VCD", if waves == Waves::Vcd { "1" } else { "0" })
        .flag_if_supported("-faligned-new")
        .flag_if_supported("-fcf-protection=none")
        .warnings(false)
        .flag("-w")
        .debug(false)
        .cargo_metadata(false);
    // cc's opt_level takes digits only; "s"/"z" go through opt_level_str.
    b.opt_level_str(opt);
    b
}

/// Most bytes of generated C++ per translation unit: Verilator's output is
/// grouped into unity files so small tops parse the Verilator headers once
/// or twice instead of eight times (4x less compile time), while the core
/// still splits into several units for parallel compilation.
const UNIT_BYTES: u64 = 400 * 1024;

/// A verilated top whose C++ must be (re)compiled.
struct Pending {
    lib: String,
    stamp: PathBuf,
    key: String,
    fast: Vec<PathBuf>,
    slow: Vec<PathBuf>,
}

/// Verilates one top and writes its unity files, unless its cached library
/// matches; always emits its link directive. Returns the work left to compile.
#[allow(clippy::too_many_arguments)]
fn verilate_top(
    out: &Path,
    verilator: &str,
    version: &str,
    name: &str,
    verilog: &str,
    ports: &[Port],
    waves: Waves,
    opt: &str,
) -> Option<Pending> {
    let lib = format!("rnicsim_{name}");
    println!("cargo:rustc-link-lib=static={lib}");
    let vfile = out.join(format!("{name}.v"));
    let mdir = out.join(name);
    let stamp = out.join(format!("{name}.stamp"));
    let shim = shim_cpp(name, ports, waves);
    let mut flags: Vec<String> = VERILATOR_FLAGS.iter().map(|s| s.to_string()).collect();
    match waves {
        Waves::Vcd => flags.push("--trace".into()),
        Waves::Fst => flags.push("--trace-fst".into()),
        Waves::Off => {}
    }
    let waivers = Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR")).join(WAIVERS);
    let waiver_text = std::fs::read_to_string(&waivers).unwrap_or_else(|e| panic!("{}: {e}", waivers.display()));
    let key = format!("{version} {flags:?} opt={opt} unit={UNIT_BYTES}\n{waiver_text}\n{shim}\n{verilog}");
    let cached =
        out.join(format!("lib{lib}.a")).exists() && std::fs::read_to_string(&stamp).map(|s| s == key).unwrap_or(false);
    if cached || cache_fetch(out, &lib, &key, &stamp) {
        return None;
    }
    std::fs::write(&vfile, verilog).expect("write verilog");
    let _ = std::fs::remove_dir_all(&mdir);
    let _ = std::fs::remove_file(&stamp);
    let started = std::time::Instant::now();
    let o = Command::new(verilator)
        .args(&flags)
        .arg("--prefix")
        .arg(format!("V{name}"))
        .arg("-Mdir")
        .arg(&mdir)
        .arg(&waivers)
        .arg(&vfile)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {verilator}: {e}"));
    if !o.status.success() {
        panic!(
            "verilator failed on top {name:?} ({}):\n{}\n{}",
            vfile.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    println!("cargo:warning=rnic-sim: verilated top {name} in {:.1}s", started.elapsed().as_secs_f64());
    let shim_path = mdir.join(format!("rnicsim_shim_{name}.cpp"));
    std::fs::write(&shim_path, &shim).expect("write shim");
    let mut srcs: Vec<(PathBuf, u64)> = std::fs::read_dir(&mdir)
        .expect("read verilator output")
        .map(|e| e.expect("dir entry"))
        .filter(|e| e.path().extension().is_some_and(|x| x == "cpp"))
        .map(|e| (e.path(), e.metadata().map(|m| m.len()).unwrap_or(0)))
        .collect();
    srcs.sort();
    // Construction-time code (`__Slow`) runs once: compiled at -O0.
    let (slow, fast): (Vec<_>, Vec<_>) = srcs.into_iter().partition(|(p, _)| p.to_string_lossy().contains("__Slow"));
    Some(Pending {
        lib,
        stamp,
        key,
        fast: unity_files(&mdir, name, "fast", &fast),
        slow: unity_files(&mdir, name, "slow", &slow),
    })
}

/// Groups `srcs` into unity files of at most [`UNIT_BYTES`] each (quoted
/// includes resolve relative to each included file, so no include path is needed).
fn unity_files(mdir: &Path, name: &str, kind: &str, srcs: &[(PathBuf, u64)]) -> Vec<PathBuf> {
    let mut groups: Vec<(String, u64)> = Vec::new();
    for (p, len) in srcs {
        match groups.last_mut() {
            Some((text, size)) if *size + len <= UNIT_BYTES => {
                let _ = writeln!(text, "#include \"{}\"", p.display());
                *size += len;
            }
            _ => groups.push((format!("#include \"{}\"\n", p.display()), *len)),
        }
    }
    groups
        .iter()
        .enumerate()
        .map(|(k, (text, _))| {
            let f = mdir.join(format!("rnicsim_unity_{name}_{kind}{k}.cpp"));
            std::fs::write(&f, text).expect("write unity file");
            f
        })
        .collect()
}

/// Compiles every pending top in two parallel batches (optimised and -O0) and archives each top's objects.
fn compile_tops(inc: &Path, waves: Waves, opt: &str, pending: &[Pending]) {
    if pending.is_empty() {
        return;
    }
    let started = std::time::Instant::now();
    let compile = |level: &str, files: Vec<&PathBuf>| -> Vec<PathBuf> {
        if files.is_empty() {
            return Vec::new();
        }
        let mut b = cxx(inc, waves, level);
        b.files(files);
        b.compile_intermediates()
    };
    let fast = compile(opt, pending.iter().flat_map(|p| &p.fast).collect());
    let slow = compile("0", pending.iter().flat_map(|p| &p.slow).collect());
    let objects: Vec<PathBuf> = fast.into_iter().chain(slow).collect();
    let mut units = 0;
    for p in pending {
        let mut b = cxx(inc, waves, opt);
        for src in p.fast.iter().chain(&p.slow) {
            let stem = src.file_stem().expect("stem").to_string_lossy().into_owned();
            let obj = objects
                .iter()
                .find(|o| o.file_stem().is_some_and(|s| s.to_string_lossy().ends_with(&format!("-{stem}"))))
                .unwrap_or_else(|| panic!("no object for {}", src.display()));
            b.object(obj);
            units += 1;
        }
        b.compile(&p.lib);
        std::fs::write(&p.stamp, &p.key).expect("write stamp");
        cache_store(&out_dir(), &p.lib, &p.key);
    }
    println!(
        "cargo:warning=rnic-sim: compiled {} top(s), {units} C++ units (-O{opt}, construction code -O0) in {:.1}s",
        pending.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Compiles the Verilator runtime once for all models (cached like the tops).
fn build_runtime(out: &Path, inc: &Path, version: &str, waves: Waves, opt: &str) {
    let lib = "rnicsim_vlrt";
    let mut files = vec![inc.join("verilated.cpp"), inc.join("verilated_threads.cpp")];
    if waves.on() {
        files.push(inc.join(waves.runtime()));
    }
    let stamp = out.join("vlrt.stamp");
    let key = format!("{version} {files:?} opt={opt} waves={waves:?}");
    let cached =
        out.join(format!("lib{lib}.a")).exists() && std::fs::read_to_string(&stamp).map(|s| s == key).unwrap_or(false);
    if !cached && !cache_fetch(out, lib, &key, &stamp) {
        let mut b = cxx(inc, waves, opt);
        b.files(&files);
        b.compile(lib);
        std::fs::write(&stamp, &key).expect("write stamp");
        cache_store(out, lib, &key);
    }
    println!("cargo:rustc-link-lib=static={lib}");
    if waves == Waves::Fst {
        // Verilator's FST writer compresses with zlib.
        println!("cargo:rustc-link-lib=z");
    }
}

/// Appends the Rust side of one top: its extern block, port table and `TopInfo`.
fn emit_rust(rust: &mut String, table: &mut String, name: &str, ports: &[Port], waves: Waves) {
    let f = format!("rnicsim_{name}");
    let _ = writeln!(rust, "extern \"C\" {{");
    let _ = writeln!(rust, "    fn {f}_new() -> *mut c_void;");
    let _ = writeln!(rust, "    fn {f}_free(m: *mut c_void);");
    let _ = writeln!(rust, "    fn {f}_eval(m: *mut c_void);");
    let _ = writeln!(rust, "    fn {f}_port_ptr(m: *mut c_void, port: u32) -> *mut c_void;");
    let _ = writeln!(rust, "    fn {f}_set(m: *mut c_void, port: u32, words: *const u32);");
    let _ = writeln!(rust, "    fn {f}_get(m: *mut c_void, port: u32, words: *mut u32);");
    if waves.on() {
        let _ = writeln!(rust, "    fn {f}_trace_open(m: *mut c_void, path: *const c_char) -> i32;");
        let _ = writeln!(rust, "    fn {f}_trace_dump(m: *mut c_void, time: u64);");
        let _ = writeln!(rust, "    fn {f}_trace_close(m: *mut c_void);");
    }
    let _ = writeln!(rust, "}}");
    let up = name.to_ascii_uppercase();
    let _ = writeln!(rust, "static PORTS_{up}: &[PortInfo] = &[");
    for p in ports {
        let dir = if p.dir == Dir::In { "PortDir::In" } else { "PortDir::Out" };
        let _ = writeln!(rust, "    PortInfo {{ name: {:?}, width: {}, dir: {dir} }},", p.name, p.width);
    }
    let _ = writeln!(rust, "];");
    let trace = if waves.on() {
        format!("Some(TraceFns {{ open: {f}_trace_open, dump: {f}_trace_dump, close: {f}_trace_close }})")
    } else {
        "None".to_string()
    };
    let _ = writeln!(
        table,
        "    TopInfo {{ name: {name:?}, ports: PORTS_{up}, new: {f}_new, free: {f}_free, eval: {f}_eval, port_ptr: {f}_port_ptr, set: {f}_set, get: {f}_get, trace: {trace} }},"
    );
}

fn out_dir() -> PathBuf {
    PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"))
}

/// Where compiled libraries are shared between the build directories of one
/// target dir (`cargo test -p rnic-sim` and a dependent crate get different
/// OUT_DIRs for the same Verilog): `RNIC_SIM_CACHE`, else `<target>/<profile>/rnic-sim-cache`.
fn cache_file(out: &Path, lib: &str, key: &str) -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    println!("cargo:rerun-if-env-changed=RNIC_SIM_CACHE");
    let dir = match std::env::var_os("RNIC_SIM_CACHE") {
        Some(d) => PathBuf::from(d),
        // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out.
        None => out.ancestors().nth(3)?.join("rnic-sim-cache"),
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    Some(dir.join(format!("lib{lib}-{:016x}.a", h.finish())))
}

/// Copies a cached library for `key` into OUT_DIR; true on a hit.
fn cache_fetch(out: &Path, lib: &str, key: &str, stamp: &Path) -> bool {
    let Some(c) = cache_file(out, lib, key) else { return false };
    if !c.exists() || std::fs::copy(&c, out.join(format!("lib{lib}.a"))).is_err() {
        return false;
    }
    std::fs::write(stamp, key).expect("write stamp");
    true
}

/// Stores OUT_DIR's library for `key` in the cache (atomically: copy, then rename).
fn cache_store(out: &Path, lib: &str, key: &str) {
    let Some(c) = cache_file(out, lib, key) else { return };
    let Some(dir) = c.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{}.{}", c.file_name().unwrap_or_default().to_string_lossy(), std::process::id()));
    if std::fs::copy(out.join(format!("lib{lib}.a")), &tmp).is_ok() {
        let _ = std::fs::rename(&tmp, &c);
    }
    // Keep the newest few versions of each library so the cache stays small.
    let prefix = format!("lib{lib}-");
    let mut old: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    old.sort();
    old.reverse();
    for (_, p) in old.into_iter().skip(4) {
        let _ = std::fs::remove_file(p);
    }
}
