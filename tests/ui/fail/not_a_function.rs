use fusebox::breaker;

#[breaker(timeout = "800ms")]
pub struct Client;

pub trait Store {
    #[breaker(timeout = "800ms")]
    async fn load(&self) -> Result<u32, fusebox::Rejection>;
}

fn main() {}
