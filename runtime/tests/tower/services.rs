//! The services the tower tests put behind the layers: `Dep`, a dependency answering the
//! status it is asked for and counting its calls, and `Gate`, a client whose readiness a test
//! opens. Included with `#[path]` by `tower_layers.rs` and `tower_permits.rs`.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use tower::Service;

/// A dependency answering `status` codes: the request is the status to answer, counted.
#[derive(Clone)]
pub struct Dep {
    calls: Arc<AtomicUsize>,
}

impl Dep {
    pub fn new() -> Dep {
        Dep {
            calls: Arc::new(AtomicUsize::new(0)),
        }
    }
    pub fn calls(&self) -> usize {
        self.calls.load(SeqCst)
    }
}

impl Service<u16> for Dep {
    type Response = u16;
    type Error = &'static str;
    type Future = std::future::Ready<Result<u16, &'static str>>;
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, status: u16) -> Self::Future {
        self.calls.fetch_add(1, SeqCst);
        std::future::ready(if status == 0 {
            Err("reset")
        } else {
            Ok(status)
        })
    }
}

/// A client whose readiness a test opens (`Gate::open_now`); calling it unpolled is a bug it
/// catches.
#[derive(Clone, Default)]
pub struct Gate {
    open: Arc<std::sync::Mutex<(bool, Option<std::task::Waker>)>>,
    polled: bool,
}

impl Gate {
    pub fn open_now(&self) {
        let mut g = self.open.lock().unwrap();
        g.0 = true;
        if let Some(w) = g.1.take() {
            w.wake();
        }
    }
}

impl Service<u16> for Gate {
    type Response = u16;
    type Error = &'static str;
    type Future = std::future::Ready<Result<u16, &'static str>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        let mut g = self.open.lock().unwrap();
        if g.0 {
            self.polled = true;
            std::task::Poll::Ready(Ok(()))
        } else {
            g.1 = Some(cx.waker().clone());
            std::task::Poll::Pending
        }
    }

    fn call(&mut self, req: u16) -> Self::Future {
        assert!(
            std::mem::take(&mut self.polled),
            "called before it was ready"
        );
        std::future::ready(Ok(req))
    }
}
