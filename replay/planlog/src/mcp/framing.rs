//! The JSON-RPC lines between stdio and rmcp. rmcp answers a `tools/call` whose params do
//! not parse (arguments that are not an object, no tool name) with -32601 "method not
//! found", which is false: the method exists, its params are invalid. This layer reads each
//! line first, answers such a request itself with -32602 and a reason, and hands every other
//! line to rmcp unchanged. Both its answers and rmcp's go out through one writer, a whole
//! line at a time.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

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

/// Stdio for rmcp, with malformed `tools/call` requests answered here.
pub(super) fn stdio() -> (DuplexStream, DuplexStream) {
    let (to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, mut from_server) = tokio::io::duplex(1 << 20);
    let (answers, mut answered) = mpsc::unbounded_channel::<String>();
    // Reader: stdin lines, checked, then passed on.
    tokio::spawn(async move {
        let mut to_server = to_server;
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(request) = serde_json::from_str::<Value>(&line)
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
            if to_server.write_all(line.as_bytes()).await.is_err()
                || to_server.write_all(b"\n").await.is_err()
            {
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
