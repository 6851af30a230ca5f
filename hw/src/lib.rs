//! `rnic-hw`: the NIC core in rust-hdl, one module per block.
//!
//! Blocks: [`regs`] (BAR0), [`dma`] (the DMA read and write muxes:
//! arbitration, completion routing by tag), [`gather`] (the gather join: a send packet's two pieces, read from two
//! scatter-gather entries, packed into one payload for the TX builder), [`sq`] (the send path: [`sched`], the QP scheduler, and [`turn`], the turn engine with [`fetch`], the WQE fetch), [`txb`] (TX
//! packet builder), [`rxin`] (RX store-and-forward + checks), [`rxe`] (the
//! receive side: [`resp`], the responder, [`ack`], the ACK receiver, and [`cqw`], the
//! completion writer), [`msix`] (the MSI-X table and CQ arming), [`spray`] (STrack's per-QP entropy selector, asked by the
//! turn engine, fed by the ACK receiver), [`cc`] (STrack's per-QP window,
//! fed by the ACK receiver, read by the turn engine), [`icrc`], [`hdr`] (header
//! pack/unpack generated from `rnic-spec`), [`desc`]/[`pack`] (descriptor
//! words between engines), [`num`] (protocol numbers of `rnic-spec` as
//! block constants).
//!
//! [`core::RnicCore`] is the top level with the vendor-neutral interfaces of
//! `docs/design.md` ("Interfaces of the core"). [`verilog_tops`] emits the Verilog of every top the
//! simulator verilates (the core and the per-block test tops).
#![deny(missing_docs)]

pub mod ack;
pub mod cc;
pub mod cdc;
pub mod core;

use rust_hdl::prelude::*;

/// Emits the Verilog of a block as a top-level module named `top`.
pub fn emit<B: Block>(mut b: B) -> String {
    b.connect_all();
    generate_verilog(&b)
}

/// `(name, verilog)` of every top-level the simulator builds a model for.
pub fn verilog_tops() -> Vec<(String, String)> {
    // rust-hdl's generator recurses as deep as the hierarchy: the board shell needs more than a thread's default stack.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(tops)
        .expect("spawn the Verilog generator")
        .join()
        .expect("Verilog generation panicked")
}

fn tops() -> Vec<(String, String)> {
    vec![
        ("shell".to_string(), emit(shell::RnicShell::default())),
        ("core".to_string(), emit(core::RnicCore::default())),
        ("icrc".to_string(), emit(icrc::IcrcBeat::default())),
        ("tx_header".to_string(), emit(hdr::TxHeader::default())),
        ("rx_header".to_string(), emit(hdr::RxHeader::default())),
        ("tx_builder".to_string(), emit(txb::TxBuilder::default())),
        ("rx_in".to_string(), emit(rxin::RxIn::default())),
        ("regs".to_string(), emit(regs::Regs::default())),
        ("sq".to_string(), emit(sq::SqEngine::default())),
        ("sched".to_string(), emit(sched::Scheduler::default())),
        ("wqe_fetch".to_string(), emit(fetch::WqeFetch::default())),
        ("resp".to_string(), emit(rxe::RxEngine::default())),
        ("ack_recv".to_string(), emit(ack::AckRecv::default())),
        ("cq_writer".to_string(), emit(cqw::CqWriter::default())),
        ("cq_mux".to_string(), emit(cqw::CqReqMux::default())),
        ("msix".to_string(), emit(msix::Msix::default())),
        ("dma_read".to_string(), emit(dma::DmaReadMux::default())),
        ("dma_write".to_string(), emit(dma::DmaWriteMux::default())),
        ("gather".to_string(), emit(gather::GatherJoin::default())),
        ("pcie_rd".to_string(), emit(pcie_rd::PcieReadFront::default())),
        ("pcie_wr".to_string(), emit(pcie_wr::PcieWriteFront::default())),
        ("fence".to_string(), emit(fence::MrFence::default())),
        ("spray".to_string(), emit(spray::SprayEngine::default())),
        ("cc".to_string(), emit(cc::CcEngine::default())),
        ("fifo".to_string(), emit(fifo::Fifo::<Bits<16>, 3, 4>::default())),
        ("usp_rc".to_string(), emit(usp_rc::UspRc::default())),
        ("usp_bar".to_string(), emit(usp_bar::UspBar::default())),
        ("usp_rq".to_string(), emit(usp_rq::UspRq::default())),
        ("cdc_fifo".to_string(), emit(cdc::CdcFifo::<Bits<16>, 5, 6>::default())),
    ]
}
pub mod cqw;
pub mod desc;
pub mod dma;
pub mod fence;
pub mod fetch;
pub mod fifo;
pub mod gather;
pub mod hdr;
pub mod icrc;
pub mod mask;
pub mod msix;
pub mod num;
pub mod pack;
pub mod pcie_rd;
pub mod pcie_wr;
pub mod prio;
pub mod push;
pub mod reg;
pub mod regs;
pub mod resp;
pub mod rxe;
pub mod rxin;
pub mod sched;
pub mod shell;
pub mod spray;
pub mod sq;
pub mod table;
pub mod turn;
pub mod txb;
pub mod usp_bar;
pub mod usp_rc;
pub mod usp_rq;

#[cfg(test)]
mod tests {
    /// rust-hdl emits `expr[...]` for a slice of a computed expression, which
    /// Verilog rejects; catch it here rather than in the Verilator build.
    #[test]
    fn emitted_verilog_slices_only_signals() {
        for (name, v) in super::verilog_tops() {
            for (i, line) in v.lines().enumerate() {
                assert!(!line.contains(")[("), "{name}.v line {}: slice of an expression: {line}", i + 1);
            }
        }
    }

    /// Signals that carry protocol numbers: opcodes, syndromes, CQE statuses
    /// and opcodes, DMA tags.
    const PROTOCOL_SIGNALS: &[&str] =
        &["opcode", "op", "syn", "syndrome", "status", "c_status", "c_op", "rd_tag", "req_tag", "dma_rd_req_tag"];

    /// The name before `.next =`, `.val() ==` or `.val() !=`, without `self.`
    /// and the DFF's `.d`/`.q`.
    fn signal_name(lhs: &str) -> &str {
        let lhs = lhs.trim().trim_start_matches('(');
        let lhs = lhs.strip_suffix(".d").or_else(|| lhs.strip_suffix(".q")).unwrap_or(lhs);
        lhs.rsplit('.').next().unwrap_or(lhs)
    }

    /// Finds a protocol signal assigned or compared to a number literal.
    fn bare_protocol_numbers(src: &str) -> Vec<String> {
        let mut found = vec![];
        for (i, line) in src.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for sep in [".next = ", ".val() == ", ".val() != "] {
                for (k, _) in code.match_indices(sep) {
                    let lhs = &code[..k];
                    let lhs = lhs.rsplit([' ', '(', '!', '&', '|']).next().unwrap_or(lhs);
                    let rhs = code[k + sep.len()..].trim_start_matches('(');
                    let name = signal_name(lhs);
                    if PROTOCOL_SIGNALS.contains(&name) && rhs.starts_with(|c: char| c.is_ascii_digit()) {
                        found.push(format!("line {}: {}", i + 1, line.trim()));
                    }
                }
            }
            if code.contains("get_bits::<3>(5)") && (code.contains("== ") || code.contains("!= ")) {
                let rhs = code.split(['=', '!']).next_back().unwrap_or("").trim();
                if rhs.starts_with(|c: char| c.is_ascii_digit()) {
                    found.push(format!("line {}: syndrome class literal: {}", i + 1, line.trim()));
                }
            }
        }
        found
    }

    /// No opcode, syndrome, status or tag literal in the RTL: they come from
    /// `rnic-spec` (as `num::Num` fields).
    #[test]
    fn no_bare_protocol_numbers_in_the_rtl() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut bad = vec![];
        let mut files = 0;
        for e in std::fs::read_dir(&dir).expect("hw/src") {
            let path = e.expect("entry").path();
            if path.extension().is_some_and(|x| x == "rs") {
                files += 1;
                let src = std::fs::read_to_string(&path).expect("read");
                let src = src.split("#[cfg(test)]").next().unwrap_or("");
                for f in bare_protocol_numbers(src) {
                    bad.push(format!("{}: {f}", path.display()));
                }
            }
        }
        assert!(files > 10, "found only {files} RTL sources in {}", dir.display());
        assert!(bad.is_empty(), "protocol numbers written as literals:\n{}", bad.join("\n"));
    }

    /// The scan above finds what it is meant to find.
    #[test]
    fn the_literal_scan_catches_literals() {
        let caught = [
            ("        self.txp.opcode.next = 0x0A.into();", 1),
            ("        self.syn.d.next = 0x60.into();", 1),
            ("        } else if self.op.val() == 0x11 {", 1),
            ("        if self.du.syndrome.val() != 0x62 {", 1),
            ("        self.c_status.d.next = 9.into();", 1),
            ("        self.rd_tag.next = 0x40.into();", 1),
            ("        } else if self.du.syndrome.val().get_bits::<3>(5) == 1 {", 1),
            ("        x.next = (self.op.val() == 6) | (self.op.val() == 7);", 2),
        ];
        for (c, n) in caught {
            assert_eq!(bare_protocol_numbers(c).len(), n, "{c}");
        }
        let fine = [
            "        self.txp.opcode.next = self.op_write_only.val();",
            "        self.c_status.d.next = self.eu.status.val();",
            "        self.cnt.next = 0.into(); // opcode",
            "        self.psn.d.next = self.psn.q.val() + 1;",
        ];
        for f in fine {
            assert!(bare_protocol_numbers(f).is_empty(), "{f}");
        }
    }
}
