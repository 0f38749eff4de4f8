//! A free function with a static name and a sync fallback, and one without a fallback.
use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub enum PayError {
    Declined,
    Unavailable(Rejection),
}

impl From<Rejection> for PayError {
    fn from(r: Rejection) -> Self {
        PayError::Unavailable(r)
    }
}

#[derive(Debug)]
pub enum Verification {
    Verified,
    WillConfirmByEmail,
}

#[breaker(name = "payments", trip_p95 = "500ms", half_open_pct = 5, fallback = confirm_by_email)]
async fn verify_payment(amount: u32) -> Result<Verification, PayError> {
    if amount == 0 {
        return Err(PayError::Declined);
    }
    let checked: u32 = "42".parse().map_err(|_| PayError::Declined)?;
    let _ = checked;
    Ok(Verification::Verified)
}

fn confirm_by_email(_err: Error<PayError>) -> Result<Verification, PayError> {
    Ok(Verification::WillConfirmByEmail)
}

#[breaker(timeout = "800ms", half_open_timeout = "3s", window_calls = 20, min_calls = 10)]
async fn lookup(id: &str) -> Result<String, PayError> {
    Ok(id.to_owned())
}

fn main() {
    let _ = verify_payment(1);
    let _ = lookup("x");
}
