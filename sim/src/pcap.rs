//! pcap capture of the frames on the wire (LINKTYPE_ETHERNET, ns timestamps).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};

/// The file under the pcap writer, shared so it can be flushed (the writer has no flush).
struct SharedFile(Arc<Mutex<BufWriter<File>>>);

impl Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).flush()
    }
}

/// A pcap file being written. Frames carry no FCS; timestamps are
/// simulated time (cycle 0 = the epoch): the moment the frame's FCS left the
/// sending NIC's MAC, raised to the previous frame's timestamp if earlier (two
/// NICs finishing within the same cycle), so they never decrease. Frames are
/// captured as the NIC sent them, before link faults.
pub struct PcapSink {
    writer: Option<PcapWriter<SharedFile>>,
    file: Arc<Mutex<BufWriter<File>>>,
    error: Option<String>,
    frames: u64,
    last_ps: u64,
}

impl PcapSink {
    /// Creates (truncates) `path`.
    pub fn create(path: &Path) -> std::io::Result<PcapSink> {
        let file = Arc::new(Mutex::new(BufWriter::new(File::create(path)?)));
        let header =
            PcapHeader { datalink: DataLink::ETHERNET, ts_resolution: TsResolution::NanoSecond, ..Default::default() };
        let writer = PcapWriter::with_header(SharedFile(file.clone()), header).map_err(std::io::Error::other)?;
        Ok(PcapSink { writer: Some(writer), file, error: None, frames: 0, last_ps: 0 })
    }

    /// Appends a frame that ended at `time_ps`. After a write error, capture stops and the error is kept.
    pub fn write(&mut self, time_ps: u64, frame: &[u8]) {
        let Some(w) = self.writer.as_mut() else { return };
        let time_ps = time_ps.max(self.last_ps);
        self.last_ps = time_ps;
        let pkt = PcapPacket::new(Duration::from_nanos(time_ps / 1000), frame.len() as u32, frame);
        if let Err(e) = w.write_packet(&pkt) {
            self.error = Some(e.to_string());
            self.writer = None;
        } else {
            self.frames += 1;
        }
    }

    /// Frames written.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The write error that stopped capture, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Flushes buffered frames to the file.
    pub fn flush(&mut self) {
        if let Err(e) = self.file.lock().unwrap_or_else(|e| e.into_inner()).flush() {
            self.error.get_or_insert(e.to_string());
        }
    }
}

impl Drop for PcapSink {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcap::PcapReader;

    #[test]
    fn frames_round_trip_with_ns_timestamps() {
        let path = std::env::temp_dir().join(format!("rnic-sim-pcap-{}.pcap", std::process::id()));
        {
            let mut s = PcapSink::create(&path).unwrap();
            s.write(4_000, &[1, 2, 3]);
            s.write(1_234_567_000, &[9; 100]);
            s.flush();
            assert_eq!(s.frames(), 2);
        }
        let mut r = PcapReader::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(r.header().datalink, DataLink::ETHERNET);
        assert_eq!(r.header().ts_resolution, TsResolution::NanoSecond);
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!((p.timestamp, &p.data[..]), (Duration::from_nanos(4), &[1u8, 2, 3][..]));
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.timestamp, Duration::from_nanos(1_234_567));
        assert_eq!(p.data.len(), 100);
        assert!(r.next_packet().is_none());
        drop(r);
        {
            let mut s = PcapSink::create(&path).unwrap();
            s.write(9_000, &[1]);
            s.write(8_000, &[2]);
        }
        let mut r = PcapReader::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(r.next_packet().unwrap().unwrap().timestamp, Duration::from_nanos(9));
        assert_eq!(r.next_packet().unwrap().unwrap().timestamp, Duration::from_nanos(9), "never decreases");
        std::fs::remove_file(&path).unwrap();
    }
}
