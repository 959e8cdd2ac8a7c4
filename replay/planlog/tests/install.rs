//! `planlog install claude-code` / `uninstall`: merging into real settings files, as the
//! binary does it, and the plugin folder shipped alongside.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

mod common;
use common::Planlog;

fn settings(project: &Path) -> PathBuf {
    project.join(".claude").join("settings.json")
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn install(p: &Planlog, project: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "install",
        "claude-code",
        "--project",
        project.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    p.run(&args, None)
}

#[test]
fn install_merges_with_other_hooks_twice_changes_nothing_and_uninstall_restores() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    let original = json!({
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "env": {"CLAUDE_CODE_TASK_LIST_ID": "team"},
        "hooks": {
            "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "./fmt.sh", "timeout": 30}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
            "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}]
        }
    });
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let text = serde_json::to_string_pretty(&original).unwrap();
    std::fs::write(settings(&project), &text).unwrap();

    let r = install(&p, &project, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let installed = read(&settings(&project));
    assert_eq!(installed["permissions"], original["permissions"]);
    assert_eq!(installed["env"], original["env"]);
    assert_eq!(installed["hooks"]["Stop"], original["hooks"]["Stop"]);
    let post = installed["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(
        post[0], original["hooks"]["PostToolUse"][0],
        "other hooks first, untouched"
    );
    assert_eq!(post[1]["matcher"], "TodoWrite|TaskCreate|TaskUpdate");
    let command = post[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(
        command.ends_with(&format!("hook claude-code --db {}", p.db().display())),
        "{command}"
    );
    assert!(
        installed["hooks"]["PreToolUse"].is_array()
            && installed["hooks"]["PostToolUseFailure"].is_array()
    );
    assert!(
        installed["hooks"].get("UserPromptSubmit").is_none(),
        "off unless --every-prompt"
    );
    let backup = PathBuf::from(format!("{}.planlog-backup", settings(&project).display()));
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), text);

    let twice = install(&p, &project, &[]);
    assert_eq!(twice.code, 0);
    assert!(twice.stderr.contains("nothing changed"), "{}", twice.stderr);
    assert_eq!(read(&settings(&project)), installed);

    let r = p.run(
        &[
            "uninstall",
            "claude-code",
            "--project",
            project.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        read(&settings(&project)),
        original,
        "uninstall removes only planlog's"
    );
}

#[test]
fn the_installed_command_runs_as_claude_code_runs_it() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    assert_eq!(
        install(&p, &project, &["--every-prompt", "--audit-only"]).code,
        0
    );
    let installed = read(&settings(&project));
    assert!(installed["hooks"]["UserPromptSubmit"].is_array());
    let command = installed["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(command.ends_with("--audit-only"), "{command}");
    let input = json!({"session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "TodoWrite", "tool_use_id": "toolu_1",
        "tool_input": {"todos": [{"content": "Installed", "status": "in_progress", "activeForm": "Installing"}]}, "tool_response": {}});
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(&project)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        input.to_string().as_bytes(),
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(p.ok(&["show", "cc-s-1"]).contains("Installed"));
}

#[test]
fn a_malformed_settings_file_is_refused_where_it_breaks_and_left_as_it_is() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let broken = "{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n";
    std::fs::write(settings(&project), broken).unwrap();
    let r = install(&p, &project, &[]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("line 3, column") && r.stderr.contains("left as it is"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(settings(&project)).unwrap(), broken);
    std::fs::write(
        settings(&project),
        r#"{"hooks": {"Stop": {"command": "x"}}}"#,
    )
    .unwrap();
    let r = install(&p, &project, &[]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not a list of matcher groups"),
        "{}",
        r.stderr
    );
}

#[test]
fn print_shows_the_result_and_writes_nothing_and_local_and_user_files_are_found() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    let r = install(&p, &project, &["--print"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(serde_json::from_str::<Value>(&r.stdout).unwrap()["hooks"]["PreToolUse"].is_array());
    assert!(!settings(&project).exists());
    assert_eq!(install(&p, &project, &["--local"]).code, 0);
    assert!(project.join(".claude/settings.local.json").exists());
    let home = p.dir.path().join("home");
    let r = p.run_env(
        &["install", "claude-code", "--user"],
        &[("CLAUDE_CONFIG_DIR", home.to_str().unwrap())],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(home.join("settings.json").exists());
}

#[test]
fn the_plugin_folder_installs_the_same_hooks() {
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("claude-plugin");
    let hooks = read(&plugin.join("hooks/hooks.json"));
    let manifest = read(&plugin.join(".claude-plugin/plugin.json"));
    assert_eq!(manifest["name"], "planlog");
    let expected = planlog_replay::claude_hooks::settings::hooks(
        &planlog_replay::claude_hooks::settings::HookSet {
            command: "planlog hook claude-code".to_owned(),
            every_prompt: false,
        },
    );
    assert_eq!(hooks["hooks"], expected);
}

#[test]
fn a_database_password_never_lands_in_the_settings_file() {
    // Install does not connect: no server is needed to check what it writes.
    let p =
        Planlog::on("postgres://agent:s3cret@db.internal:5432/plans?connect_timeout=3&password=x");
    let project = p.dir.path().join("app");
    let r = install(&p, &project, &["--print"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stdout.contains("s3cret") && !r.stdout.contains("password="),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("--db 'postgres://agent@db.internal:5432/plans?connect_timeout=3'"),
        "the URL with its options: {}",
        r.stdout
    );
    assert!(
        r.stderr.contains("~/.pgpass"),
        "says where the password goes: {}",
        r.stderr
    );
}
