//! Who may ask the viewer, and the headers every answer carries.
//!
//! - **Host**: a request whose `Host` is not an address the viewer serves is refused, so a
//!   page on another site cannot reach it through DNS rebinding.
//! - **Writes** (anything but GET and HEAD) are taken only from the page itself: the same
//!   `Origin` as the address served, and the per-process token the page holds
//!   (`X-Planlog-Token`); never in read-only mode.
//! - **Headers**: a Content-Security-Policy that allows only the viewer's own script and style
//!   (no inline script, so nothing in the store can run as code), no sniffing, no framing, no
//!   referrer, no caching.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::Ui;
use super::api::error;

/// The policy of every answer.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The token header.
pub(crate) const TOKEN_HEADER: &str = "x-planlog-token";

/// The checks, then the request, then the headers.
pub(crate) async fn check(State(ui): State<Arc<Ui>>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    let Some(host) = host.filter(|h| ui.hosts.iter().any(|a| a.eq_ignore_ascii_case(h))) else {
        return error(
            StatusCode::FORBIDDEN,
            "this viewer answers only requests addressed to it (127.0.0.1 or localhost and its port); the Host header names another host",
        );
    };
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let header_is = |name: &str, want: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v == want)
        };
        if !header_is(header::ORIGIN.as_str(), &format!("http://{host}"))
            || !header_is(TOKEN_HEADER, &ui.token)
        {
            return error(
                StatusCode::FORBIDDEN,
                "changes are taken only from the viewer's own page (same origin, with its token)",
            );
        }
        if ui.read_only {
            return error(
                StatusCode::FORBIDDEN,
                "this viewer is read-only (started with --read-only, or the store cannot be written)",
            );
        }
    }
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}
