//! The host library's logs through `tracing`, in a test binary of their own:
//! `tracing` caches per call site whether any subscriber wants it, and a test
//! thread of another test that reaches a call site while this test's scoped
//! subscriber is being installed can cache it as unwanted (in CI the buffer
//! once stayed empty). Alone in its process, the test has no such neighbour.

use rnic::{AccessFlags, Mtu, SendWr, WcStatus, WrOpcode};
use rnic_tests::{pair, wait, World};

const LEN: usize = 4096;
const MSG: u32 = 256;

/// Logs go to a buffer for [`logs_name_the_failed_qp_and_its_error`].
#[derive(Clone, Default)]
struct LogBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for LogBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The host library's logs (`tracing`, at `debug`): a WRITE with a bad key
/// is logged as an error completion naming its QP, WR and status, the QP's
/// move to ERROR, and the QP state changes of its setup.
#[test]
fn logs_name_the_failed_qp_and_its_error() {
    let buf = LogBuf::default();
    let sub = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("rnic=debug"))
        .with_ansi(false)
        .with_writer({
            let b = buf.clone();
            move || b.clone()
        })
        .finish();
    let qpn = tracing::subscriber::with_default(sub, || {
        // Another test thread may have registered a callsite while this
        // subscriber was being installed, caching it as disabled: ask again.
        tracing::callsite::rebuild_interest_cache();
        let nics = pair();
        let w = World::new(&nics, 1, 4, Mtu::Mtu1024);
        let (qa, _) = &w.conns[0];
        let dst = w.pd_b.reg_mr(LEN, AccessFlags::REMOTE_WRITE | AccessFlags::LOCAL_WRITE).unwrap();
        let src = w.pd_a.reg_mr(LEN, AccessFlags::empty()).unwrap();
        let opcode = WrOpcode::RdmaWrite { remote_addr: dst.addr(), rkey: dst.rkey() ^ 0x40 };
        qa.post_send(&SendWr {
            send_flags: rnic::SendFlags::SIGNALED,
            wr_id: 77,
            opcode,
            sg_list: src.sge(0, MSG).into(),
        })
        .unwrap();
        let wcs = wait(&w.cq_a, 1, LEN as u64);
        assert_eq!(wcs[0].status, WcStatus::RemAccessErr);
        qa.qp_num()
    });
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let has = |needle: &str| text.lines().any(|l| l.contains(needle));
    assert!(
        text.lines().any(|l| l.contains("error completion")
            && l.contains(&format!("qpn={qpn}"))
            && l.contains("wr_id=77")
            && l.contains("RemAccessErr")),
        "no error-completion line for QP {qpn}:\n{text}"
    );
    assert!(has("QP enters ERROR"), "{text}");
    assert!(has("QP state change") && has("to=Rts"), "{text}");
}
