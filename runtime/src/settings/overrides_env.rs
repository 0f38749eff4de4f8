//! [`Overrides`] from the environment: `FUSEBOX_BREAKER[_LABEL]="name; key=value; ..."` and
//! `FUSEBOX_BULKHEAD[_LABEL]=...` (the name ends at the first `;`, so `/`, `::`, `-` and `*`
//! fit in it). Each value is read by the settings table's `set_text`, as the attribute's are.

use fusebox_settings::{ConfigError, Source};

use super::overrides::{GuardKind, OverrideError, Overrides};

impl Overrides {
    /// Reads `FUSEBOX_BREAKER*` and `FUSEBOX_BULKHEAD*` from the environment (the format is
    /// [`Overrides`]'); each value parsed, not yet checked against a breaker's settings.
    ///
    /// ```
    /// use fusebox::settings::Overrides;
    /// // With no FUSEBOX_BREAKER* / FUSEBOX_BULKHEAD* variables set, there is nothing to apply.
    /// let o = Overrides::from_env().unwrap();
    /// # let _ = o;
    /// ```
    // A start-time error that names the breaker, key and value in full: its size is no cost.
    #[allow(clippy::result_large_err)]
    pub fn from_env() -> Result<Overrides, OverrideError> {
        let vars = std::env::vars_os().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        });
        Overrides::from_vars(vars)
    }

    /// [`from_env`](Self::from_env) over given variables; others are ignored. A value that
    /// is not `name; key=value; ...` is an [`OverrideError`] naming it.
    // A start-time error that names the breaker, key and value in full: its size is no cost.
    #[allow(clippy::result_large_err)]
    pub fn from_vars<K, V>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Overrides, OverrideError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut o = Overrides::new();
        for (k, v) in vars {
            let var = k.as_ref();
            let target = if is_var(var, "FUSEBOX_BREAKER") {
                GuardKind::Breaker
            } else if is_var(var, "FUSEBOX_BULKHEAD") {
                GuardKind::Bulkhead
            } else {
                continue;
            };
            let mut parts = v.as_ref().split(';');
            let name = parts.next().unwrap_or_default().trim().to_owned();
            let mut pairs = Vec::new();
            for part in parts.map(str::trim).filter(|p| !p.is_empty()) {
                let Some((key, value)) = part.split_once('=') else {
                    return Err(OverrideError {
                        target,
                        name,
                        given_as: None,
                        key: part.to_owned(),
                        value: String::new(),
                        source: Source::Env,
                        reason: ConfigError::OutOfRange {
                            field: "override",
                            value: part.to_owned(),
                            expected: "`key=value` pairs after the name, separated by `;`",
                        },
                    });
                };
                pairs.push((key.trim().to_owned(), value.trim().to_owned()));
            }
            o = o.entry(target, name, pairs, Source::Env);
        }
        o.check_text()?;
        Ok(o)
    }
}

fn is_var(var: &str, base: &str) -> bool {
    var.strip_prefix(base)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('_'))
}
