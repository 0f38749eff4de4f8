//! The expansion's own names do not clash with a user's: an item named like the one import
//! the expansion makes (`__fusebox`, its old name) and one a glob brings in compile.
#![deny(warnings)]

#[allow(non_snake_case, dead_code)]
mod __fusebox {}

mod helpers {
    #[allow(dead_code)]
    pub struct Settings;
}

#[allow(unused_imports)]
use helpers::*;

use fusebox::{breaker, bulkhead, Rejection};

#[breaker(timeout = "1s")]
#[bulkhead(pool = 2)]
async fn dep() -> Result<u8, Rejection> {
    Ok(1)
}

fn main() {
    let _ = dep();
}
