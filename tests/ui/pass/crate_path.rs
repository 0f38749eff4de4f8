//! `crate = "..."`: the generated code finds fusebox through a re-export.
mod platform {
    pub use fusebox as resilience;
}

use fusebox::Rejection;

#[fusebox::breaker(crate = "crate::platform::resilience", name = "re-exported")]
#[fusebox::bulkhead(pool = 2)]
async fn through_reexport() -> Result<u8, Rejection> {
    Ok(1)
}

#[fusebox::bulkhead(crate = crate::platform::resilience, pool = 2, name = "re-exported-pool")]
async fn pool_only() -> Result<u8, Rejection> {
    Ok(1)
}

fn main() {
    let _ = through_reexport();
    let _ = pool_only();
}
