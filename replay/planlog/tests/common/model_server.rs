//! A scripted model on loopback that speaks Anthropic's Messages API, OpenAI's Responses
//! API (server-sent events, `POST …/responses`), OpenAI's Chat Completions API (`POST
//! …/chat/completions`) and Google's Gemini API (`POST …:streamGenerateContent`), so the real
//! Claude Code, Codex CLI, opencode and Gemini CLI can run sessions whose model turns a test
//! decides, and their hooks fire as they do for users.
//!
//! A script is a list of [`Step`]s. A request is answered by the first unused step whose
//! trigger is in its last user message (a prompt's words, or the id of the tool call whose
//! result that message carries; a step that calls a tool only when the request offers
//! tools); any other request (a compaction's summary, a title) gets a
//! short text. Every request is kept for the test to read.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One model turn: answered when `trigger` is in the request's last user message.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    trigger: String,
    blocks: Vec<Value>,
}

impl Step {
    /// A turn that calls `tool` (tool call id `id`) with `input`.
    pub(crate) fn tool(trigger: &str, id: &str, tool: &str, input: Value) -> Self {
        Self {
            trigger: trigger.to_owned(),
            blocks: vec![json!({"type": "tool_use", "id": id, "name": tool, "input": input})],
        }
    }

    /// A turn that answers with text (and ends the agent's turn).
    pub(crate) fn text(trigger: &str, text: &str) -> Self {
        Self {
            trigger: trigger.to_owned(),
            blocks: vec![json!({"type": "text", "text": text})],
        }
    }
}

#[derive(Default)]
struct State {
    steps: Vec<(Step, bool)>,
    requests: Vec<Value>,
    /// The prompt tokens the next Chat Completions or Responses answer reports (opencode and
    /// Codex compact a session whose last answer says it nearly fills the model's context); 0:
    /// the usual 10.
    prompt_tokens: u64,
}

/// The server; it runs until the test ends.
#[derive(Clone)]
pub(crate) struct ModelServer {
    url: String,
    state: Arc<Mutex<State>>,
}

impl ModelServer {
    /// Starts a server with no script yet.
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = serve(stream, &state);
                });
            }
        });
        Self { url, state }
    }

    /// The base URL (for `ANTHROPIC_BASE_URL`).
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Adds steps to the script.
    pub(crate) fn script(&self, steps: impl IntoIterator<Item = Step>) {
        let mut state = self.state.lock().unwrap();
        state.steps.extend(steps.into_iter().map(|s| (s, false)));
    }

    /// Makes the next Chat Completions, Responses or streamed Gemini answer (only that one)
    /// report `n` prompt tokens.
    pub(crate) fn report_prompt_tokens_once(&self, n: u64) {
        self.state.lock().unwrap().prompt_tokens = n;
    }

    /// Every request so far (its JSON body), in order.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Fails the test unless every step of the script was answered.
    pub(crate) fn assert_all_answered(&self) {
        let unused = self.unused();
        assert!(unused.is_empty(), "steps never answered: {unused:?}");
    }

    /// The triggers of steps not answered yet.
    pub(crate) fn unused(&self) -> Vec<String> {
        self.state
            .lock()
            .unwrap()
            .steps
            .iter()
            .filter(|(_, used)| !used)
            .map(|(s, _)| s.trigger.clone())
            .collect()
    }
}

/// The request's last message of the user (requests may end with a system message); in a
/// Responses request, its last user message or tool call output; in a Gemini request, its
/// last content of the user (a prompt, or a function's response, named by its function and
/// the call id Gemini gave it).
pub(crate) fn last_user_message(request: &Value) -> String {
    if let Some(contents) = request["contents"].as_array() {
        return contents
            .iter()
            .rev()
            .find(|c| c["role"] == "user")
            .map(Value::to_string)
            .unwrap_or_default();
    }
    if let Some(input) = request["input"].as_array() {
        return input
            .iter()
            .rev()
            .find(|i| {
                (i["type"] == "message" && i["role"] == "user")
                    || i["type"] == "function_call_output"
            })
            .map(Value::to_string)
            .unwrap_or_default();
    }
    // (A Chat Completions tool result is a message of role `tool`, naming its call.)
    request["messages"]
        .as_array()
        .and_then(|m| {
            m.iter()
                .rev()
                .find(|m| m["role"] == "user" || m["role"] == "tool")
        })
        .map(Value::to_string)
        .unwrap_or_default()
}

/// The names of the tools a request offers.
pub(crate) fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn serve(stream: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let (mut length, mut chunked) = (0usize, false);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let body = if chunked {
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            body.extend_from_slice(&chunk[..n]);
        }
        body
    } else {
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    };
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut out = stream;
    if request_line.starts_with("GET") {
        // A model list (Codex asks for one): none beyond what the client names.
        return json_answer(&mut out, r#"{"data": [], "models": []}"#);
    }
    if path.contains("count_tokens") || path.contains(":countTokens") {
        return json_answer(&mut out, r#"{"input_tokens": 10, "totalTokens": 10}"#);
    }
    let (blocks, prompt_tokens) = {
        let mut state = state.lock().unwrap();
        let prompt_tokens = if path.ends_with("/chat/completions")
            || path.ends_with("/responses")
            || path.contains(":streamGenerateContent")
        {
            std::mem::take(&mut state.prompt_tokens)
        } else {
            0
        };
        state.requests.push(request.clone());
        let last = last_user_message(&request);
        // A turn that calls a tool answers only a request that offers tools (not a title or a
        // summary asked of the model on the side, which quotes the prompt too).
        let offers_tools = request["tools"].as_array().is_some_and(|t| !t.is_empty());
        match state.steps.iter_mut().find(|(s, used)| {
            !used
                && last.contains(&s.trigger)
                && (offers_tools || !s.blocks.iter().any(|b| b["type"] == "tool_use"))
        }) {
            Some((step, used)) => {
                *used = true;
                (step.blocks.clone(), prompt_tokens)
            }
            None => (vec![json!({"type": "text", "text": "ok"})], prompt_tokens),
        }
    };
    // Gemini names the model in the path (`/v1beta/models/<model>:streamGenerateContent`).
    let in_path = path
        .split("/models/")
        .nth(1)
        .and_then(|p| p.split(':').next());
    let model = request["model"]
        .as_str()
        .or(in_path)
        .unwrap_or("claude-opus-4-8")
        .to_owned();
    if path.contains(":generateContent") {
        // Gemini's calls that do not stream (a check of who speaks next, a title).
        return json_answer(&mut out, &gemini_chunk(&model, &blocks).to_string());
    }
    write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
    )?;
    let events = if path.ends_with("/responses") {
        response_events(&blocks, prompt_tokens)
    } else if path.ends_with("/chat/completions") {
        chat_events(&model, &blocks, prompt_tokens)
    } else if path.contains(":streamGenerateContent") {
        gemini_events(&model, &blocks, prompt_tokens)
    } else {
        events(&model, &blocks)
    };
    out.write_all(events.as_bytes())?;
    out.flush()
}

/// Answers with the JSON `text`, and closes.
fn json_answer(out: &mut TcpStream, text: &str) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    )?;
    out.flush()
}

/// The server-sent events of one Responses API answer made of `blocks` (a tool call becomes a
/// `function_call` item whose `arguments` are the input's JSON text).
fn response_events(blocks: &[Value], prompt_tokens: u64) -> String {
    let input = if prompt_tokens == 0 {
        10
    } else {
        prompt_tokens
    };
    let id = format!("resp_{}", ulid::Ulid::new());
    let mut events = vec![json!({"type": "response.created", "response": {"id": id}})];
    for (i, b) in blocks.iter().enumerate() {
        let item = if b["type"] == "tool_use" {
            json!({"type": "function_call", "id": format!("fc_{i}"), "status": "completed", "name": b["name"],
                "call_id": b["id"], "arguments": b["input"].to_string()})
        } else {
            json!({"type": "message", "id": format!("msg_{i}"), "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": b["text"], "annotations": []}]})
        };
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    events.push(json!({"type": "response.completed", "response": {"id": id, "usage": {
        "input_tokens": input, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input + 5}}}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect()
}

/// The server-sent events of one Chat Completions answer made of `blocks` (a tool call
/// becomes a `tool_calls` delta whose `arguments` are the input's JSON text), reporting
/// `prompt_tokens` (10 when 0).
fn chat_events(model: &str, blocks: &[Value], prompt_tokens: u64) -> String {
    let id = format!("chatcmpl-{}", ulid::Ulid::new());
    let chunk = |choices: Value, usage: Option<Value>| {
        let mut c = json!({"id": id, "object": "chat.completion.chunk", "created": 1, "model": model, "choices": choices});
        if let Some(u) = usage {
            c["usage"] = u;
        }
        format!("data: {c}\n\n")
    };
    let mut out = String::new();
    let mut calls = 0;
    for b in blocks {
        let delta = if b["type"] == "tool_use" {
            calls += 1;
            json!({"role": "assistant", "tool_calls": [{"index": calls - 1, "id": b["id"], "type": "function",
                "function": {"name": b["name"], "arguments": b["input"].to_string()}}]})
        } else {
            json!({"role": "assistant", "content": b["text"]})
        };
        out.push_str(&chunk(
            json!([{"index": 0, "delta": delta, "finish_reason": null}]),
            None,
        ));
    }
    let finish = if calls > 0 { "tool_calls" } else { "stop" };
    out.push_str(&chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
        None,
    ));
    let prompt = if prompt_tokens == 0 {
        10
    } else {
        prompt_tokens
    };
    out.push_str(&chunk(
        json!([]),
        Some(json!({"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5})),
    ));
    out.push_str("data: [DONE]\n\n");
    out
}

/// The server-sent events of one Gemini answer made of `blocks` (a tool call becomes a
/// `functionCall` part: Gemini CLI gives it an id of its own, so a step answering its result
/// is triggered by the function's name or by text in the call's result).
fn gemini_events(model: &str, blocks: &[Value], prompt_tokens: u64) -> String {
    let mut chunk = gemini_chunk(model, blocks);
    if prompt_tokens > 0 {
        chunk["usageMetadata"] = json!({"promptTokenCount": prompt_tokens, "candidatesTokenCount": 5,
            "totalTokenCount": prompt_tokens + 5});
    }
    format!("data: {chunk}\r\n\r\n")
}

/// One Gemini answer made of `blocks`.
fn gemini_chunk(model: &str, blocks: &[Value]) -> Value {
    let parts: Vec<Value> = blocks
        .iter()
        .map(|b| {
            if b["type"] == "tool_use" {
                json!({"functionCall": {"name": b["name"], "args": b["input"]}})
            } else {
                json!({"text": b["text"]})
            }
        })
        .collect();
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}, "modelVersion": model})
}

/// The server-sent events of one message made of `blocks`.
fn events(model: &str, blocks: &[Value]) -> String {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": format!("msg_{}", ulid::Ulid::new()), "type": "message", "role": "assistant",
        "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ];
    for (i, b) in blocks.iter().enumerate() {
        if b["type"] == "tool_use" {
            events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}));
            events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": b["input"].to_string()}}));
        } else {
            events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}));
            events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}));
        }
        events.push(json!({"type": "content_block_stop", "index": i}));
    }
    let stop = if blocks.iter().any(|b| b["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    };
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect()
}
