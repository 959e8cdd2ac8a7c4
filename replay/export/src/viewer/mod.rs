//! The time-travel viewer's data and page: what `planlog ui` serves and what
//! `planlog export SESSION --format html` writes into one self-contained file.
//!
//! The page (`page.html`, `app.js`, `app.css`, plain DOM code and no library) reads sessions
//! and events as [`session_json`] and [`events_json`] give them, from the server's `/api/`
//! or from the data inlined into an exported file. Every text from the store reaches the page
//! as data and is put into the DOM as text, never as markup.

use planlog_core::events::{Event, EventBody};
use planlog_core::{Plan, Seq, SessionInfo, SessionState, apply};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use planlog_audit::{history_from, no_earlier};

/// The page's script.
pub const APP_JS: &str = include_str!("app.js");
/// The page's style sheet.
pub const APP_CSS: &str = include_str!("app.css");
/// The page's body.
const BODY: &str = include_str!("page.html");

/// A session as the viewer lists it.
pub fn session_json(info: &SessionInfo) -> Value {
    let origin = match &info.origin {
        planlog_core::events::Origin::New => json!({"type": "new"}),
        planlog_core::events::Origin::Fork { parent, at } => {
            json!({"type": "fork", "parent": parent.as_str(), "at": at.get()})
        }
        planlog_core::events::Origin::SubAgent { parent } => {
            json!({"type": "sub_agent", "parent": parent.as_str()})
        }
        planlog_core::events::Origin::Import { source, parent, .. } => {
            json!({"type": "import", "source": source, "parent": parent.as_ref().map(|p| p.as_str())})
        }
    };
    json!({
        "id": info.id.as_str(),
        "label": info.label,
        "origin": origin,
        "created": info.created.to_string(),
        "updated": info.updated.to_string(),
        "events": info.events,
        "done": info.progress.completed,
        "total": info.progress.total(),
        "plan_mode": info.plan_mode,
        "description": info.description,
    })
}

/// A session's events as the viewer shows them: each with its envelope, the plan after it
/// when it sets one, the call as the agent sent it and the result the model read (`call`,
/// when the event records them: format 4), what planlog derived from it (`submitted`,
/// `semantics`; a refusal's `code` and `message`), and the audit's words for what changed.
/// `before` is the state before the first of `events`; `earlier` gives plans at seqs before
/// them (a checkpoint is compared with the plan it belongs with).
pub fn events_json(
    before: SessionState,
    events: &[Event],
    earlier: &dyn Fn(Seq) -> Option<Plan>,
) -> Vec<Value> {
    event_values(before, events, earlier).collect()
}

/// [`events_json`] one event at a time (an export writes each before making the next).
pub fn event_values<'a>(
    before: SessionState,
    events: &'a [Event],
    earlier: &dyn Fn(Seq) -> Option<Plan>,
) -> impl Iterator<Item = Value> + 'a {
    let history = history_from(before.clone(), events, earlier);
    let mut state = before;
    events.iter().zip(history).map(move |(e, h)| {
        state = apply(std::mem::take(&mut state), &e.body);
        let mut v = json!({
            "seq": e.seq.get(),
            "kind": e.body.kind(),
            "at": e.at.to_string(),
            "turn": e.turn,
            "call_id": e.call_id.as_ref().map(|c| c.as_str()),
            "hash": e.hash.to_string(),
            "changes": planlog_audit::Transition::describe_all(&h.transitions),
            "flags": h.flags,
            "note": h.note,
            "explanation": h.explanation,
            "source": h.source,
            "plan_mode": state.plan_mode,
            "call": e.body.tool_call(),
        });
        match &e.body {
            EventBody::SessionStarted(s) => {
                v["plan"] = json!(s.plan.items());
                v["label"] = json!(s.label);
            }
            EventBody::PlanWritten(w) => {
                v["plan"] = json!(w.plan.items());
                v["submitted"] = json!(w.submitted);
                v["semantics"] = json!(w.semantics);
            }
            EventBody::WriteRejected(r) => {
                v["submitted"] = r.submitted.clone();
                v["code"] = json!(r.code.as_str());
                v["message"] = json!(r.message);
                v["tool"] = json!(r.tool);
            }
            EventBody::ModeSelected(m) => v["mode"] = json!(m.active),
            EventBody::CheckpointSeen(c) => {
                v["checkpoint"] = json!(c.items);
                v["differs"] = json!(h.differs);
                v["against"] = json!(c.against.map(Seq::get));
            }
            EventBody::SessionDescribed(d) => v["description"] = json!(d),
            EventBody::ContextCompacted(c) => {
                v["compaction"] = json!({
                    "trigger": c.trigger,
                    "tokens_before": c.tokens_before,
                    "tokens_after": c.tokens_after,
                });
            }
            EventBody::PlanRestored(r) => {
                v["restored"] = json!({"after": r.after, "text": r.text});
            }
        }
        v
    })
}

/// JSON made safe to inline in a `<script>` element (no `<`, so no `</script>`).
fn inline_json(v: &Value) -> String {
    v.to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

fn sha256_b64(text: &str) -> String {
    base64(&Sha256::digest(text.as_bytes()))
}

/// Standard base64 (for CSP hashes).
fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(T[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The page `planlog ui` serves: the body, its assets by URL, the token state-changing
/// requests must carry, and whether forking is offered.
pub fn served_page(token: &str, read_only: bool) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"planlog-token\" content=\"{token}\">\n<meta name=\"planlog-mode\" content=\"{}\">\n<title>planlog</title>\n<link rel=\"stylesheet\" href=\"/assets/app.css\">\n<script src=\"/assets/app.js\" defer></script>\n</head>\n{BODY}</html>\n",
        if read_only { "read-only" } else { "live" }
    )
}

/// One session as a self-contained page (data, script and style inlined; no network): the
/// time-travel view of `planlog export --format html`. A Content-Security-Policy allows only
/// the inlined script and style (by hash), so nothing in the data can run.
pub fn html(info: &SessionInfo, events: &[Event]) -> String {
    let data = json!({
        "sessions": [session_json(info)],
        "events": {info.id.as_str(): events_json(SessionState::default(), events, &no_earlier)},
    });
    let csp = format!(
        "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'",
        sha256_b64(APP_JS),
        sha256_b64(APP_CSS)
    );
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"planlog-mode\" content=\"file\">\n<title>planlog: {}</title>\n<style>{APP_CSS}</style>\n<script type=\"application/json\" id=\"planlog-data\">{}</script>\n</head>\n{BODY}<script>{APP_JS}</script>\n</html>\n",
        html_text(info.id.as_str()),
        inline_json(&data)
    )
}

/// The page of [`html`] up to the first of the session's events: with [`html_event`] for
/// each event and [`html_tail`], the same text as [`html`], written a piece at a time
/// (`export_to`). The data object's members are in serde_json's order (sorted keys:
/// `events`, then `sessions`); a test holds the pieces to [`html`].
pub fn html_head(info: &SessionInfo) -> String {
    let csp = format!(
        "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'",
        sha256_b64(APP_JS),
        sha256_b64(APP_CSS)
    );
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"planlog-mode\" content=\"file\">\n<title>planlog: {}</title>\n<style>{APP_CSS}</style>\n<script type=\"application/json\" id=\"planlog-data\">{{\"events\":{{{}:[",
        html_text(info.id.as_str()),
        inline_json(&json!(info.id.as_str()))
    )
}

/// One of the session's events ([`events_json`]) in the page of [`html_head`]; `first` for
/// the first one (no comma before it).
pub fn html_event(event: &Value, first: bool) -> String {
    let text = inline_json(event);
    if first { text } else { format!(",{text}") }
}

/// The page of [`html_head`] after the last event.
pub fn html_tail(info: &SessionInfo) -> String {
    format!(
        "]}},\"sessions\":[{}]}}</script>\n</head>\n{BODY}<script>{APP_JS}</script>\n</html>\n",
        inline_json(&session_json(info))
    )
}

/// The end of a one-file page that holds a window of the session ([`crate::export_html_window`]):
/// after its events, the plan before the first of them and where the window is, so the page
/// steps through those seqs and says which part of the session it holds.
pub fn html_window_tail(info: &SessionInfo, plan_before: &Plan, from: Seq, to: Seq) -> String {
    let plan: Value = serde_json::from_str(&plan_before.to_json()).unwrap_or(Value::Null);
    format!(
        "]}},\"plan_before\":{},\"sessions\":[{}],\"window\":{}}}</script>\n</head>\n{BODY}<script>{APP_JS}</script>\n</html>\n",
        inline_json(&plan),
        inline_json(&session_json(info)),
        inline_json(&json!({"from": from.get(), "to": to.get(), "last": info.events}))
    )
}

/// Text for an HTML text position.
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn inlined_data_cannot_close_its_script_element() {
        let v = json!({"content": "</script><script>alert(1)</script> & \u{2028}"});
        let s = inline_json(&v);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert_eq!(serde_json::from_str::<Value>(&s).unwrap(), v);
    }
}
