//! Finding the [`Rejection`] in tower's type-erased errors.

use crate::error::Error;

use crate::error::Rejection;

/// Tower's type-erased error (`tower::BoxError`), spelled out so that only `tower-service` is
/// needed.
///
/// ```
/// use fusebox::tower::BoxError;
/// use fusebox::Rejection;
/// let err: BoxError = Box::new(Rejection::Full { name: "pool".into(), pool: 1 });
/// assert!(err.is::<Rejection>());
/// ```
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The [`Rejection`] in `err` or anywhere in its chain of sources, if any.
///
/// A [`crate::Error<E>`] boxed into a `BoxError` (by tonic, `ServiceBuilder::map_err(Into::into)`,
/// axum's `HandleErrorLayer`...) can only be downcast with its exact `E`; this finds the rejection
/// without knowing it, through `Error::source`, also behind other wrappers.
///
/// ```
/// use fusebox::tower::{rejection, BoxError};
/// use fusebox::{Error, Rejection};
///
/// let full = Rejection::Full { name: "pool".into(), pool: 4 };
/// let boxed: BoxError = Error::<std::io::Error>::Rejected(full.clone()).into();
/// assert_eq!(rejection(&*boxed), Some(&full));
/// let other: BoxError = std::io::Error::other("reset").into();
/// assert_eq!(rejection(&*other), None);
/// ```
pub fn rejection<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a Rejection> {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(r) = e.downcast_ref::<Rejection>() {
            return Some(r);
        }
        cur = e.source();
    }
    None
}

/// Flattens an [`Error<E>`] into tower's `BoxError` the way tower's own middleware does: a
/// rejection becomes a boxed [`Rejection`] (so `err.is::<Rejection>()`), the inner error is
/// boxed as itself, so code that downcasts it keeps working.
///
/// ```
/// use fusebox::tower::box_error;
/// use fusebox::{Error, Rejection};
///
/// let open = Rejection::Full { name: "pool".into(), pool: 1 };
/// assert!(box_error(Error::<std::io::Error>::Rejected(open)).is::<Rejection>());
/// let io = box_error(Error::Failed(std::io::Error::other("reset")));
/// assert!(io.is::<std::io::Error>());
/// ```
///
/// In a stack: `ServiceBuilder::new().map_err(box_error).layer(breaker_layer)`.
pub fn box_error<E: Into<BoxError>>(err: Error<E>) -> BoxError {
    match err {
        Error::Rejected(r) => Box::new(r),
        Error::Failed(e) => e.into(),
    }
}
