//! Completion channels (`ibv_comp_channel`): blocking waits for completions.
//!
//! A channel owns one of the NIC's MSI-X vectors, bound to an eventfd
//! ([`Device::set_irq`](rnic_driver::Device::set_irq)). Its CQs carry the
//! vector in their table entry; [`Cq::req_notify_cq`] arms a CQ on the NIC
//! (`REG_CQ_ARM`), and the NIC's next CQE to it disarms it and sends the
//! vector's message, which wakes the eventfd. The message names the vector,
//! not the CQ: [`CompChannel::get_cq_event`] reads the NIC's armed bits
//! (`REG_CQ_ARMED`) and returns a CQ the library armed that the NIC has
//! disarmed since.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use rnic_driver::EventFd;
use rnic_spec::regs;

use crate::cq::Cq;
use crate::ctx::Context;
use crate::{Error, Result};

/// A channel's vector and eventfd, shared by the channel's handles and its CQs.
pub(crate) struct ChanInner {
    ctx: Context,
    /// The MSI-X vector.
    pub vector: u32,
    fd: EventFd,
}

impl Drop for ChanInner {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; the vector is masked and freed as far as possible.
        let _ = self.ctx.dev().set_irq(self.vector, None);
        self.ctx.state().irq_vectors &= !(1 << self.vector);
    }
}

/// A completion channel (`ibv_comp_channel`). Cheap to clone; it lives while
/// a handle or a CQ created on it does.
#[derive(Clone)]
pub struct CompChannel {
    inner: Arc<ChanInner>,
}

impl CompChannel {
    pub(crate) fn create(ctx: &Context) -> Result<CompChannel> {
        let vectors = (ctx.query_device().caps >> regs::CAPS_MSIX_SHIFT & 0xF) as u32;
        if vectors == 0 {
            return Err(Error::Unsupported {
                what: format!("completion channels: {} has no MSI-X vectors", ctx.dev().name()),
            });
        }
        let vector = {
            let mut st = ctx.state();
            let v = (0..vectors)
                .find(|v| st.irq_vectors & (1 << v) == 0)
                .ok_or(Error::Exhausted { what: "MSI-X vector", max: vectors as usize })?;
            st.irq_vectors |= 1 << v;
            v
        };
        let fd = match EventFd::new() {
            Ok(fd) => fd,
            Err(e) => {
                ctx.state().irq_vectors &= !(1 << vector);
                return Err(e.into());
            }
        };
        // From here the drop of `inner` unbinds and frees the vector.
        let inner = Arc::new(ChanInner { ctx: ctx.clone(), vector, fd });
        ctx.dev().set_irq(vector, Some(inner.fd.as_raw_fd()))?;
        Ok(CompChannel { inner })
    }

    pub(crate) fn inner(&self) -> &Arc<ChanInner> {
        &self.inner
    }

    /// The context the channel belongs to.
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// The MSI-X vector the channel owns.
    pub fn vector(&self) -> u32 {
        self.inner.vector
    }

    /// The eventfd (`channel->fd`): readable after an interrupt of the
    /// channel's vector. On hardware it can be handed to poll or epoll; in
    /// cosimulation the NICs only run while some thread drives them (a
    /// `get_cq_event`, a `wait_cq`, a post), so prefer `get_cq_event` there.
    pub fn fd(&self) -> RawFd {
        self.inner.fd.as_raw_fd()
    }

    /// Waits for a completion event (`ibv_get_cq_event`) and returns its CQ:
    /// one of this channel's CQs that was armed ([`Cq::req_notify_cq`]) and
    /// has had a CQE written since. Each arming gives one event. Fails with
    /// [`Error::EventTimeout`] after `timeout_cycles` device cycles. The
    /// caller acknowledges the event with [`Cq::ack_cq_events`] and polls
    /// the CQ (after arming it again, to miss nothing).
    pub fn get_cq_event(&self, timeout_cycles: u64) -> Result<Cq> {
        let ctx = &self.inner.ctx;
        let dev = ctx.dev();
        let start = dev.now_cycles();
        loop {
            if let Some(cq) = self.fired()? {
                return Ok(cq);
            }
            let waited = dev.now_cycles().saturating_sub(start);
            if waited >= timeout_cycles {
                let armed = {
                    let st = ctx.state();
                    st.cqs.iter().flatten().filter(|c| c.vector == Some(self.inner.vector) && c.armed).count()
                };
                return Err(Error::EventTimeout { vector: self.inner.vector, cycles: waited, armed });
            }
            if dev.wait_fd(self.inner.fd.as_raw_fd(), timeout_cycles - waited)? {
                // Interrupts since the last look; which CQ had its event is read from the NIC.
                self.inner.fd.take()?;
            }
        }
    }

    /// A CQ of this channel whose event happened, marked returned.
    fn fired(&self) -> Result<Option<Cq>> {
        let ctx = &self.inner.ctx;
        let mut st = ctx.state();
        let mine = |c: &crate::cq::CqInner| c.vector == Some(self.inner.vector) && c.armed;
        if !st.cqs.iter().flatten().any(mine) {
            return Ok(None);
        }
        let hw_armed = if st.cqs.iter().flatten().any(|c| mine(c) && c.fired) {
            u64::MAX
        } else {
            ctx.dev().read_reg(regs::REG_CQ_ARMED)?
        };
        for (cqn, slot) in st.cqs.iter_mut().enumerate() {
            let Some(c) = slot else { continue };
            if mine(c) && (c.fired || hw_armed >> cqn & 1 == 0) {
                // A CQ whose last handle is being dropped has no one to report to.
                let Some(life) = c.handle.upgrade() else { continue };
                c.armed = false;
                c.fired = false;
                c.unacked += 1;
                return Ok(Some(Cq::from_life(life)));
            }
        }
        Ok(None)
    }
}
