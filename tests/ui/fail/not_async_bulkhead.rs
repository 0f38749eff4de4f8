// `#[bulkhead]` on a fn that is not async: one error, and none about `u32`.
use fusebox::bulkhead;

#[bulkhead(pool = 2)]
fn lookup() -> u32 {
    1
}

fn main() {}
