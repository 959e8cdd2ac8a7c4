//! The JSON-RPC lines between stdio and rmcp. rmcp answers a `tools/call` whose params do
//! not parse (arguments that are not an object, no tool name) with -32601 "method not
//! found", which is false: the method exists, its params are invalid. This layer reads each
//! line first, answers such a request itself with -32602 and a reason, and hands every other
//! line to rmcp unchanged. Both its answers and rmcp's go out through one writer, a whole
//! line at a time.

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

use super::held::HeldArguments;

/// The reason a `tools/call` request's params are invalid, if they are.
fn invalid_call(request: &Value) -> Option<String> {
    if request.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let params = match request.get("params") {
        Some(Value::Object(p)) => p,
        Some(other) => return Some(format!("params must be an object, not {other}")),
        None => {
            return Some(
                "params are missing; tools/call needs {\"name\", \"arguments\"}".to_owned(),
            );
        }
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        Some(_) => return Some("params.name must be the tool name as a string".to_owned()),
        None => return Some("params.name is missing: which tool to call".to_owned()),
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => None,
        Some(other) => Some(format!(
            "params.arguments must be a JSON object, not {}",
            match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "that",
            }
        )),
    }
}

/// What a quick look at a request line finds.
#[derive(Debug, PartialEq, Eq)]
enum Look {
    /// Plainly not a malformed `tools/call`: not a tools/call at all, or one whose `name` is
    /// a string and whose `arguments` are an object, null or absent.
    Fine,
    /// A well-formed tools/call of a tool whose arguments are held: they are the object at
    /// this place in the line.
    Hold(std::ops::Range<usize>),
    /// Not told so: the line is looked at whole.
    Unsure,
}

/// Looks at `line` without building the request (its arguments are skipped over, not
/// parsed into a [`Value`]); `holds` says which tools' arguments are held.
fn look(line: &str, holds: &dyn Fn(&str) -> bool) -> Look {
    #[derive(serde::Deserialize)]
    struct Request<'a> {
        #[serde(default, borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(default, borrow)]
        params: Option<&'a RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct Call<'a> {
        #[serde(default, borrow)]
        name: Option<std::borrow::Cow<'a, str>>,
        #[serde(default, borrow)]
        arguments: Option<&'a RawValue>,
    }
    let Ok(request) = serde_json::from_str::<Request<'_>>(line) else {
        return Look::Unsure;
    };
    if request.method.as_deref() != Some("tools/call") {
        return Look::Fine;
    }
    let Some(Ok(call)) = request
        .params
        .map(|p| serde_json::from_str::<Call<'_>>(p.get()))
    else {
        return Look::Unsure;
    };
    let Some(name) = call.name else {
        return Look::Unsure;
    };
    match call.arguments.map(RawValue::get) {
        None | Some("null") => Look::Fine,
        Some(text) if text.starts_with('{') => {
            // The raw value is a slice of the line: its place in it.
            let start = (text.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
            match line.get(start..start + text.len()) {
                Some(same) if std::ptr::eq(same, text) && holds(&name) => {
                    Look::Hold(start..start + text.len())
                }
                _ => Look::Fine,
            }
        }
        Some(_) => Look::Unsure,
    }
}

/// Stdio for rmcp, with malformed `tools/call` requests answered here, and the arguments
/// of calls of the tools `holds` names held out of rmcp's way for the handler
/// ([`HeldArguments`]).
pub(super) fn stdio(
    held: HeldArguments,
    holds: impl Fn(&str) -> bool + Send + 'static,
) -> (DuplexStream, DuplexStream) {
    let (to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, mut from_server) = tokio::io::duplex(1 << 20);
    let (answers, mut answered) = mpsc::unbounded_channel::<String>();
    // Reader: stdin lines, checked, then passed on.
    tokio::spawn(async move {
        let mut to_server = to_server;
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(mut line)) = lines.next_line().await {
            let seen = look(&line, &holds);
            if let Look::Hold(at) = &seen {
                let token = held.hold(&line[at.clone()]);
                line.replace_range(at.clone(), &token);
            }
            if seen == Look::Unsure
                && let Ok(request) = serde_json::from_str::<Value>(&line)
                && let Some(id) = request.get("id").filter(|id| !id.is_null())
                && let Some(reason) = invalid_call(&request)
            {
                let answer = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {"code": -32602, "message": format!("invalid params: {reason}; nothing was written")},
                });
                if answers.send(answer.to_string()).is_err() {
                    break;
                }
                continue;
            }
            // The whole line in one write: rmcp's reader wakes once for it.
            line.push('\n');
            if to_server.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        // Dropping `to_server` ends rmcp's input: the connection closes.
    });
    // Writer: rmcp's lines and our answers, each whole, to stdout.
    tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        let mut pending = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            tokio::select! {
                read = from_server.read(&mut buf) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        pending.extend_from_slice(&buf[..n]);
                        if let Some(end) = pending.iter().rposition(|b| *b == b'\n') {
                            let whole: Vec<u8> = pending.drain(..=end).collect();
                            if stdout.write_all(&whole).await.is_err() || stdout.flush().await.is_err() {
                                break;
                            }
                        }
                    }
                },
                Some(answer) = answered.recv() => {
                    if stdout.write_all(answer.as_bytes()).await.is_err()
                        || stdout.write_all(b"\n").await.is_err()
                        || stdout.flush().await.is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    (server_in, server_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick look lets through only lines the whole look would let through, on every
    /// shape the whole look tells apart (and a few it sees only as not JSON-RPC).
    #[test]
    fn the_quick_look_passes_only_what_the_whole_look_passes() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plan_write","arguments":{"steps":[]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plan_write","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plan_write"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plan_write","arguments":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plan_write","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"plan_write","arguments":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{"name":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":1,"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":1}}]"#,
            r#"not json"#,
            r#" { "id" : 2 , "method" : "tools/call" , "params" : { "name" : "x" , "arguments" : null } } "#,
            r#" { "id" : 2 , "method" : "tools/call" , "params" : { "name" : "x" , "arguments" : { } } } "#,
        ];
        for line in lines {
            let whole = serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|request| invalid_call(&request));
            if look(line, &|_| true) != Look::Unsure {
                assert!(
                    whole.is_none(),
                    "{line}: passed quickly, refused whole ({whole:?})"
                );
            }
        }
        // The common requests do take the quick way.
        for fine in [1, 2, 12, 13, 16] {
            assert_eq!(look(lines[fine], &|_| true), Look::Fine, "{}", lines[fine]);
        }
        for unsure in [3, 9, 10, 11] {
            assert_eq!(
                look(lines[unsure], &|_| true),
                Look::Unsure,
                "{}",
                lines[unsure]
            );
        }
        // A held tool's arguments are found where they are in the line, as sent; another
        // tool's are left in it.
        for call in [0, 17] {
            let sent: Value = serde_json::from_str(lines[call]).unwrap();
            let name = sent["params"]["name"].as_str().unwrap();
            let Look::Hold(at) = look(lines[call], &|tool| tool == name) else {
                panic!("{} is a held call", lines[call]);
            };
            let found: Value = serde_json::from_str(&lines[call][at]).unwrap();
            assert_eq!(found, sent["params"]["arguments"]);
            assert_eq!(look(lines[call], &|tool| tool != name), Look::Fine);
        }
    }

    #[test]
    fn only_malformed_tool_calls_are_caught() {
        let call = |params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
        assert!(invalid_call(&call(json!({"name": "plan_write", "arguments": {}}))).is_none());
        assert!(invalid_call(&call(json!({"name": "plan_write"}))).is_none());
        assert!(invalid_call(&call(json!({"name": "plan_write", "arguments": "x"}))).is_some());
        assert!(invalid_call(&call(json!({"arguments": {}}))).is_some());
        assert!(invalid_call(&call(json!([1]))).is_some());
        assert!(
            invalid_call(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).is_none()
        );
    }
}
