//! Hack: a hackbench-style storm. Each group has 20 receivers, each on its own Unix socket
//! pair, and 20 senders that send 100-byte messages to every receiver of their group, round and
//! round, until stopped (hackbench's defaults: 20 senders and receivers a group, 100-byte
//! messages; `hackbench 50` is 50 groups). Threads rather than processes, so one worker holds it.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{BackgroundLoad, Count, RunInputs, Starter, Tally};

const PER_GROUP: usize = 20;
const MESSAGE: usize = 100;
const HACK_STACK: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hack {
    pub groups: u32,
}

impl Hack {
    pub fn of(run: &RunInputs) -> Hack {
        Hack {
            groups: run.hack_groups,
        }
    }
}

impl BackgroundLoad for Hack {
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>> {
        let messages = Count::new(|r| &mut r.hack_messages);
        start(s, self.groups, &messages)?;
        Ok(Box::new(messages))
    }
}

fn start(s: &mut Starter, groups: u32, messages: &Count) -> Result<()> {
    // Stopping shuts every socket down, which wakes threads blocked in send or recv. Registered
    // before any thread starts, so a storm that only partly started still stops.
    let all_fds: Arc<Mutex<Vec<Arc<OwnedFd>>>> = Arc::default();
    let registry = Arc::clone(&all_fds);
    s.on_stop(move || {
        if let Ok(fds) = registry.lock() {
            for fd in fds.iter() {
                // SAFETY: valid descriptor.
                unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_RDWR) };
            }
        }
    });
    for _ in 0..groups.max(1) {
        let mut send_ends = Vec::with_capacity(PER_GROUP);
        for _ in 0..PER_GROUP {
            let (tx, rx) = UnixStream::pair().context("creating a socket pair for Hack")?;
            let (tx, rx) = (Arc::new(OwnedFd::from(tx)), Arc::new(OwnedFd::from(rx)));
            if let Ok(mut fds) = all_fds.lock() {
                fds.push(Arc::clone(&tx));
                fds.push(Arc::clone(&rx));
            }
            send_ends.push(tx);
            let messages = messages.adder();
            s.spawn("hb-hack-recv", HACK_STACK, move |stop, _| {
                let mut buf = [0u8; MESSAGE];
                let mut got = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: valid descriptor and buffer.
                    let n =
                        unsafe { libc::recv(rx.as_raw_fd(), buf.as_mut_ptr().cast(), MESSAGE, 0) };
                    if n <= 0 {
                        break;
                    }
                    got += 1;
                }
                messages.fetch_add(got, Ordering::Relaxed);
                Ok(())
            })?;
        }
        let send_ends = Arc::new(send_ends);
        for _ in 0..PER_GROUP {
            let ends = Arc::clone(&send_ends);
            s.spawn("hb-hack-send", HACK_STACK, move |stop, _| {
                let msg = [0x5au8; MESSAGE];
                'outer: while !stop.load(Ordering::Relaxed) {
                    for fd in ends.iter() {
                        // SAFETY: valid descriptor and buffer; MSG_NOSIGNAL turns a closed peer
                        // into an error instead of SIGPIPE.
                        let n = unsafe {
                            libc::send(
                                fd.as_raw_fd(),
                                msg.as_ptr().cast(),
                                MESSAGE,
                                libc::MSG_NOSIGNAL,
                            )
                        };
                        if n <= 0 {
                            break 'outer;
                        }
                    }
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}
