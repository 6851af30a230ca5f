//! The send path: the QP scheduler (`sched.rs`) and the turn engine
//! (`turn.rs`: context, lookahead and segmentation, with the WQE fetch of
//! `fetch.rs` inside), joined by the schedule-queue stream and the turn-end
//! stream. Its ports are those of the SQ engine the
//! core connects; the Verilator top `sq` is this block, so the SQ engine's
//! block test covers both, and `sched` tests the scheduler alone.

use crate::ack::APSN_BITS;
use crate::desc::{ARM_BITS, LACK_BITS, REW_BITS, REW_ONE_BIT, REW_WQE_BIT, TXD_BITS};
use crate::fifo::Fifo;
use crate::num::Num;
use crate::push::PushSlot;
use crate::reg::Reg;
use crate::sched::Scheduler;
use crate::turn::TurnEngine;
use rnic_spec::desc::send_op;
use rnic_spec::params::{JOB_QUEUE_LOG2, MR_BITS, QPN_BITS, REWIND_QUEUE_LOG2};
use rust_hdl::prelude::*;

pub use crate::turn::TAG_WQE;

/// Scheduler + turn engine.
#[derive(LogicBlock, Default)]
pub struct SqEngine {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: every register and FIFO of the block back to its power-on state (block RAM contents are kept).
    pub reset: Signal<In, Bit>,
    /// The core's table scrub after a reset: each table writes zero at `scrub_addr` (the block is held in reset meanwhile).
    pub scrub: Signal<In, Bit>,
    /// The entry the scrub clears this cycle.
    pub scrub_addr: Signal<In, Bits<QPN_BITS>>,
    /// SQ doorbell written (the new producer index is already in the SQ PI table).
    pub db_valid: Signal<In, Bit>,
    /// QPN of the doorbell.
    pub db_qpn: Signal<In, Bits<QPN_BITS>>,
    /// Some BAR write this cycle, a doorbell or not (`db_qpn` is then the write's QPN field).
    pub bar_wr: Signal<In, Bit>,
    /// The doorbell's producer index.
    pub db_pi: Signal<In, Bits<16>>,
    /// A WQE push word is written (`crate::push`).
    pub push_we: Signal<In, Bit>,
    /// Its index.
    pub push_idx: Signal<In, Bits<4>>,
    /// The word.
    pub push_data: Signal<In, Bits<64>>,
    /// A QP commit: the push slot is dropped.
    pub push_clear: Signal<In, Bit>,
    /// A pushed payload beat for the TX builder (its descriptor has `inl`).
    pub ipl_write: Signal<Out, Bit>,
    /// The beat.
    pub ipl_data: Signal<Out, Bits<512>>,
    /// The pushed-payload FIFO is full.
    pub ipl_full: Signal<In, Bit>,
    /// Cycle counter (TX timestamps).
    pub now: Signal<In, Bits<64>>,
    /// QPC table read address.
    pub qpc_addr: Signal<Out, Bits<QPN_BITS>>,
    /// QPC table read data (one cycle after the address).
    pub qpc_data: Signal<In, Bits<448>>,
    /// SQ producer index table read address.
    pub sqpi_addr: Signal<Out, Bits<QPN_BITS>>,
    /// SQ producer index read data.
    pub sqpi_data: Signal<In, Bits<16>>,
    /// SQ state table read address.
    pub st_addr: Signal<Out, Bits<QPN_BITS>>,
    /// SQ state read data.
    pub st_data: Signal<In, Bits<128>>,
    /// SQ state write enable.
    pub st_we: Signal<Out, Bit>,
    /// SQ state write address.
    pub st_waddr: Signal<Out, Bits<QPN_BITS>>,
    /// SQ state write data.
    pub st_wdata: Signal<Out, Bits<128>>,
    /// QP error table read address (errors reported by the ACK path).
    pub err_addr: Signal<Out, Bits<QPN_BITS>>,
    /// QP error flag.
    pub err_data: Signal<In, Bit>,
    /// lACK table read address (the ACK receiver's acknowledged position).
    pub lack_addr: Signal<Out, Bits<QPN_BITS>>,
    /// lACK table read data (`LackPack`, one cycle after the address).
    pub lack_data: Signal<In, Bits<LACK_BITS>>,
    /// MR table read address.
    pub mr_addr: Signal<Out, Bits<MR_BITS>>,
    /// MR table read data.
    pub mr_data: Signal<In, Bits<256>>,
    /// DMA read request valid.
    pub rd_valid: Signal<Out, Bit>,
    /// DMA read request ready.
    pub rd_ready: Signal<In, Bit>,
    /// DMA read address.
    pub rd_addr: Signal<Out, Bits<64>>,
    /// DMA read length.
    pub rd_len: Signal<Out, Bits<16>>,
    /// DMA read tag.
    pub rd_tag: Signal<Out, Bits<8>>,
    /// WQE completion valid.
    pub wqe_valid: Signal<In, Bit>,
    /// WQE completion data.
    pub wqe_data: Signal<In, Bits<512>>,
    /// WQE completion ready.
    pub wqe_ready: Signal<Out, Bit>,
    /// TX descriptor FIFO write.
    pub txd_write: Signal<Out, Bit>,
    /// TX descriptor.
    pub txd_data: Signal<Out, Bits<TXD_BITS>>,
    /// TX descriptor FIFO full.
    pub txd_full: Signal<In, Bit>,
    /// Local error (to the completion writer) write.
    pub lerr_write: Signal<Out, Bit>,
    /// Local error word.
    pub lerr_data: Signal<Out, Bits<64>>,
    /// Local error FIFO full.
    pub lerr_full: Signal<In, Bit>,
    /// An SQ rewind from the host (`REG_SQ_REWIND`).
    pub rew_write: Signal<In, Bit>,
    /// The rewind (`RewindPack`).
    pub rew_data: Signal<In, Bits<REW_BITS>>,
    /// A READ response job from the responder (`RewindPack`).
    pub job_write: Signal<In, Bit>,
    /// The job.
    pub job_data: Signal<In, Bits<REW_BITS>>,
    /// The job queue is full (the responder waits).
    pub job_full: Signal<Out, Bit>,
    /// A READ request was sent (`ArmPack`, to the responder block).
    pub arm_write: Signal<Out, Bit>,
    /// The arm word.
    pub arm_data: Signal<Out, Bits<ARM_BITS>>,
    /// The arm queue is full.
    pub arm_full: Signal<In, Bit>,
    /// Job sequence table read address (`TurnEngine::jseq_addr`).
    pub jseq_addr: Signal<Out, Bits<QPN_BITS>>,
    /// Its data.
    pub jseq_data: Signal<In, Bits<3>>,
    /// Window table read address (`TurnEngine::cwnd_addr`).
    pub cwnd_addr: Signal<Out, Bits<QPN_BITS>>,
    /// Its data.
    pub cwnd_data: Signal<In, Bits<32>>,
    /// Acknowledged-PSN table read address (`TurnEngine::apsn_addr`).
    pub apsn_addr: Signal<Out, Bits<QPN_BITS>>,
    /// Its data.
    pub apsn_data: Signal<In, Bits<APSN_BITS>>,
    /// A choice asked of the path selector (`TurnEngine::spray_valid`).
    pub spray_valid: Signal<Out, Bit>,
    /// The selector takes it.
    pub spray_ready: Signal<In, Bit>,
    /// Its QP.
    pub spray_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// Its congestion window in packets (`TurnEngine::spray_cwnd`).
    pub spray_cwnd: Signal<Out, Bits<32>>,
    /// Pulse: the selector's answer.
    pub spray_done: Signal<In, Bit>,
    /// DCTCP's `snd_nxt` write (`TurnEngine::nxt_we`).
    pub nxt_we: Signal<Out, Bit>,
    /// Its QP.
    pub nxt_qpn: Signal<Out, Bits<QPN_BITS>>,
    /// The PSN after the packet.
    pub nxt_psn: Signal<Out, Bits<24>>,
    /// The chosen entropy.
    pub spray_path: Signal<In, Bits<8>>,
    /// Pulse: a rewind was applied.
    pub cnt_rewind: Signal<Out, Bit>,
    /// Pulse: a rewind was dropped (queue full, or a resend carrying a WQE whose opcode the host may not post).
    pub cnt_rewind_drop: Signal<Out, Bit>,
    /// Pulse: a single-packet resend was taken from the queue.
    pub cnt_resend: Signal<Out, Bit>,
    /// Pulse: the turn engine skipped to lACK (`TurnEngine::cnt_skip`).
    pub cnt_skip: Signal<Out, Bit>,
    /// Pulse: a WQE was taken from the push slot.
    pub cnt_push: Signal<Out, Bit>,
    /// Check for the tests: `TurnEngine::seg_stale`.
    pub seg_stale: Signal<Out, Bit>,
    sched: Scheduler,
    turn: TurnEngine,
    push: PushSlot,
    rewq: Fifo<Bits<REW_BITS>, REWIND_QUEUE_LOG2, { REWIND_QUEUE_LOG2 + 1 }>,
    /// READ response jobs, served before the host's rewinds and resends (but after one
    /// already moved into `head_q`).
    jobq: Fifo<Bits<REW_BITS>, JOB_QUEUE_LOG2, { JOB_QUEUE_LOG2 + 1 }>,
    /// The queue head the turn engine sees, from registers: its decisions on the head's
    /// kind do not wait on the queues' read muxes. Reloaded when empty or popped.
    head_v: Reg<Bit>,
    head_q: Reg<Bits<REW_BITS>>,
    head_load: Signal<Local, Bit>,
    /// The host's resend carries a WQE whose opcode the host may not post.
    rew_bad_op: Signal<Local, Bit>,
    op_read: Num<{ send_op::RDMA_READ as u64 }, 8>,
}

// A resend's ONE bit and its WQE's opcode byte, as literals for rust-hdl.
const _: () = assert!(REW_ONE_BIT == 88 && REW_WQE_BIT == 89);

impl Logic for SqEngine {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, sched, turn, push, rewq, jobq);
        dff_setup!(self, clock, head_v, head_q);
        self.head_v.reset.next = self.reset.val();
        self.head_q.reset.next = self.reset.val();
        self.sched.reset.next = self.reset.val();
        self.push.reset.next = self.reset.val();
        self.push.wr_valid.next = self.push_we.val();
        self.push.wr_idx.next = self.push_idx.val();
        self.push.wr_data.next = self.push_data.val();
        self.push.db_valid.next = self.db_valid.val();
        self.push.db_qpn.next = self.db_qpn.val();
        self.push.db_pi.next = self.db_pi.val();
        self.push.clear.next = self.push_clear.val();
        self.push.take.next = self.turn.push_take.val();
        self.turn.push_valid.next = self.push.valid.val();
        self.turn.push_qpn.next = self.push.qpn.val();
        self.turn.push_ssn.next = self.push.ssn.val();
        self.turn.push_wqe.next = self.push.wqe.val();
        self.turn.push_pl.next = self.push.payload.val();
        self.ipl_write.next = self.turn.ipl_write.val();
        self.ipl_data.next = self.turn.ipl_data.val();
        self.turn.ipl_full.next = self.ipl_full.val();
        self.turn.reset.next = self.reset.val();
        self.rewq.reset.next = self.reset.val();
        self.jobq.reset.next = self.reset.val();
        // A rewound QP is kicked into the scheduler in a cycle without a BAR write:
        // the QPN is picked by the write strobe, not by the doorbell's address decode.
        self.sched.db_valid.next = self.db_valid.val() | (self.turn.kick_valid.val() & !self.bar_wr.val());
        self.sched.db_qpn.next = self.turn.kick_qpn.val();
        if self.bar_wr.val() {
            self.sched.db_qpn.next = self.db_qpn.val();
        }
        self.turn.kick_ready.next = !self.bar_wr.val();
        // A host resend's WQE with an opcode the host may not post (a READ response job's, or none) is dropped.
        self.rew_bad_op.next =
            self.rew_data.val().get_bit(88) & (self.rew_data.val().get_bits::<8>(89) > self.op_read.val());
        self.rewq.write.next = self.rew_write.val() & !self.rewq.full.val() & !self.rew_bad_op.val();
        self.rewq.data_in.next = self.rew_data.val();
        self.cnt_rewind_drop.next = self.rew_write.val() & (self.rewq.full.val() | self.rew_bad_op.val());
        // The responder's jobs and the turn engine's requeued rests share the
        // queue's write port (the responder first); the responder leaves one
        // place free, so the job the turn engine holds always fits back.
        self.jobq.write.next = self.job_write.val() | (self.turn.rq_valid.val() & !self.jobq.full.val());
        self.jobq.data_in.next = self.job_data.val();
        self.turn.rq_ready.next = false;
        if !self.job_write.val() {
            self.jobq.data_in.next = self.turn.rq_data.val();
            self.turn.rq_ready.next = !self.jobq.full.val();
        }
        self.job_full.next = self.jobq.almost_full.val();
        // The turn engine sees one queue head: a READ response job if one waits, else the host's
        // rewind, moved into `head_q` when it is empty or popped (one cycle later than the queues).
        self.head_load.next = !self.head_v.q.val() | self.turn.rew_pop.val();
        self.rewq.read.next = self.head_load.val() & self.jobq.empty.val() & !self.rewq.empty.val();
        self.jobq.read.next = self.head_load.val() & !self.jobq.empty.val();
        if self.head_load.val() {
            self.head_v.d.next = !(self.rewq.empty.val() & self.jobq.empty.val());
            self.head_q.d.next = self.rewq.data_out.val();
            if !self.jobq.empty.val() {
                self.head_q.d.next = self.jobq.data_out.val();
            }
        }
        self.turn.rew_valid.next = self.head_v.q.val();
        self.turn.rew_data.next = self.head_q.q.val();
        self.arm_write.next = self.turn.arm_write.val();
        self.arm_data.next = self.turn.arm_data.val();
        self.turn.arm_full.next = self.arm_full.val();
        self.jseq_addr.next = self.turn.jseq_addr.val();
        self.turn.jseq_data.next = self.jseq_data.val();
        self.cnt_rewind.next = self.turn.cnt_rewind.val();
        self.cwnd_addr.next = self.turn.cwnd_addr.val();
        self.turn.cwnd_data.next = self.cwnd_data.val();
        self.apsn_addr.next = self.turn.apsn_addr.val();
        self.turn.apsn_data.next = self.apsn_data.val();
        self.spray_valid.next = self.turn.spray_valid.val();
        self.turn.spray_ready.next = self.spray_ready.val();
        self.spray_qpn.next = self.turn.spray_qpn.val();
        self.spray_cwnd.next = self.turn.spray_cwnd.val();
        self.nxt_we.next = self.turn.nxt_we.val();
        self.nxt_qpn.next = self.turn.nxt_qpn.val();
        self.nxt_psn.next = self.turn.nxt_psn.val();
        self.turn.spray_done.next = self.spray_done.val();
        self.turn.spray_path.next = self.spray_path.val();
        self.cnt_resend.next = self.turn.cnt_resend.val();
        self.cnt_skip.next = self.turn.cnt_skip.val();
        self.cnt_push.next = self.turn.cnt_push.val();
        self.seg_stale.next = self.turn.seg_stale.val();
        self.turn.sched_valid.next = self.sched.sched_valid.val();
        self.turn.sched_qpn.next = self.sched.sched_qpn.val();
        self.sched.sched_pop.next = self.turn.sched_pop.val();
        self.sched.done_valid.next = self.turn.done_valid.val();
        self.sched.done_qpn.next = self.turn.done_qpn.val();
        self.sched.done_more.next = self.turn.done_more.val();
        self.turn.done_ready.next = self.sched.done_ready.val();
        self.turn.now.next = self.now.val();
        self.qpc_addr.next = self.turn.qpc_addr.val();
        self.turn.qpc_data.next = self.qpc_data.val();
        self.sqpi_addr.next = self.turn.sqpi_addr.val();
        self.turn.sqpi_data.next = self.sqpi_data.val();
        self.st_addr.next = self.turn.st_addr.val();
        self.turn.st_data.next = self.st_data.val();
        self.st_we.next = self.turn.st_we.val();
        self.st_waddr.next = self.turn.st_waddr.val();
        self.st_wdata.next = self.turn.st_wdata.val();
        self.err_addr.next = self.turn.err_addr.val();
        self.turn.err_data.next = self.err_data.val();
        self.lack_addr.next = self.turn.lack_addr.val();
        self.turn.lack_data.next = self.lack_data.val();
        self.mr_addr.next = self.turn.mr_addr.val();
        self.turn.mr_data.next = self.mr_data.val();
        self.rd_valid.next = self.turn.rd_valid.val();
        self.turn.rd_ready.next = self.rd_ready.val();
        self.rd_addr.next = self.turn.rd_addr.val();
        self.rd_len.next = self.turn.rd_len.val();
        self.rd_tag.next = self.turn.rd_tag.val();
        self.turn.wqe_valid.next = self.wqe_valid.val();
        self.turn.wqe_data.next = self.wqe_data.val();
        self.wqe_ready.next = self.turn.wqe_ready.val();
        self.txd_write.next = self.turn.txd_write.val();
        self.txd_data.next = self.turn.txd_data.val();
        self.turn.txd_full.next = self.txd_full.val();
        self.lerr_write.next = self.turn.lerr_write.val();
        self.lerr_data.next = self.turn.lerr_data.val();
        self.turn.lerr_full.next = self.lerr_full.val();
        self.turn.scrub.next = self.scrub.val();
        self.turn.scrub_addr.next = self.scrub_addr.val();
    }
}
