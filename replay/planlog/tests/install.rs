//! `planlog install claude-code` / `uninstall`: merging into real settings files, as the
//! binary does it, treating them as the user's (mode, links, key order, read-only), the plan
//! tools' opt-in and its undoing, and the plugin folder shipped alongside.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
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

/// A PATH without planlog on it (the system's folders only).
const BARE_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn run_in(p: &Planlog, args: &[&str], path: &str) -> common::Run {
    p.run_env(args, &[("PATH", path)])
}

fn install(p: &Planlog, project: &Path, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "install",
        "claude-code",
        "--project",
        project.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run_in(p, &args, BARE_PATH)
}

fn uninstall(p: &Planlog, project: &Path) -> common::Run {
    run_in(
        p,
        &[
            "uninstall",
            "claude-code",
            "--project",
            project.to_str().unwrap(),
        ],
        BARE_PATH,
    )
}

fn with_settings(p: &Planlog, text: &str) -> PathBuf {
    let project = p.dir.path().join("app");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(settings(&project), text).unwrap();
    project
}

#[test]
fn install_merges_with_other_hooks_twice_changes_nothing_and_uninstall_restores() {
    let p = Planlog::new();
    let original = json!({
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "env": {"CLAUDE_CODE_TASK_LIST_ID": "team"},
        "hooks": {
            "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "./fmt.sh", "timeout": 30}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
            "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-planlog-hook claude-code.sh"}]}]
        }
    });
    let text = serde_json::to_string_pretty(&original).unwrap();
    let project = with_settings(&p, &text);
    let r = install(&p, &project, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let installed = read(&settings(&project));
    assert_eq!(installed["permissions"], original["permissions"]);
    assert_eq!(installed["env"]["CLAUDE_CODE_TASK_LIST_ID"], "team");
    assert_eq!(installed["env"]["CLAUDE_CODE_ENABLE_TODO_TOOLS"], "1");
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
    assert!(installed["hooks"]["PostToolUseFailure"].is_array());
    assert!(installed["hooks"]["SessionEnd"].is_array());
    assert!(
        installed["hooks"].get("PreToolUse").is_none(),
        "nothing blocks unless --enforce"
    );
    assert!(
        installed["hooks"].get("UserPromptSubmit").is_none(),
        "off unless --every-prompt"
    );
    assert!(
        r.stderr.contains("set CLAUDE_CODE_ENABLE_TODO_TOOLS=1"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("recorded and flagged, never blocked"),
        "{}",
        r.stderr
    );
    let backup = PathBuf::from(format!("{}.planlog-backup", settings(&project).display()));
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), text);

    let twice = install(&p, &project, &[]);
    assert_eq!(twice.code, 0);
    assert!(twice.stderr.contains("nothing changed"), "{}", twice.stderr);
    assert_eq!(read(&settings(&project)), installed);

    let r = uninstall(&p, &project);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        read(&settings(&project)),
        original,
        "uninstall removes only planlog's, and the setting it added"
    );
    assert!(
        r.stderr.contains("removed CLAUDE_CODE_ENABLE_TODO_TOOLS"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_plan_tools_setting_is_turned_on_and_put_back_as_it_was_unless_left_alone() {
    let p = Planlog::new();
    let project = with_settings(
        &p,
        "{\n  \"env\": {\n    \"CLAUDE_CODE_ENABLE_TODO_TOOLS\": \"0\"\n  }\n}\n",
    );
    let r = install(&p, &project, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("(it was \"0\")"), "{}", r.stderr);
    assert_eq!(
        read(&settings(&project))["env"]["CLAUDE_CODE_ENABLE_TODO_TOOLS"],
        "1"
    );
    // Installing again (with --enforce) keeps what the first install remembered.
    assert_eq!(install(&p, &project, &["--enforce"]).code, 0);
    let r = uninstall(&p, &project);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(settings(&project)).unwrap(),
        "{\n  \"env\": {\n    \"CLAUDE_CODE_ENABLE_TODO_TOOLS\": \"0\"\n  }\n}\n"
    );
    // --leave-todo-tools: left as it is, and said what that means.
    let r = install(&p, &project, &["--leave-todo-tools"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        read(&settings(&project))["env"]["CLAUDE_CODE_ENABLE_TODO_TOOLS"],
        "0"
    );
    assert!(
        r.stderr.contains("these hooks record nothing"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_users_file_keeps_its_mode_key_order_links_and_owner() {
    let p = Planlog::new();
    let text = "{\n    \"zeta\": {\"b\": 1, \"a\": 2},\n    \"env\": {\n        \"ANTHROPIC_API_KEY\": \"sk-secret\"\n    },\n    \"alpha\": true\n}\n";
    // A private file, reached through a link (dotfiles), with a second hard link.
    let dotfiles = p.dir.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    std::fs::write(&real, text).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let hard = dotfiles.join("hard-link.json");
    std::fs::hard_link(&real, &hard).unwrap();
    let project = p.dir.path().join("app");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&real, settings(&project)).unwrap();

    let r = install(&p, &project, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        std::fs::symlink_metadata(settings(&project))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is still a link"
    );
    let written = std::fs::read_to_string(&real).unwrap();
    assert_eq!(
        std::fs::read_to_string(&hard).unwrap(),
        written,
        "the hard link sees it"
    );
    assert_eq!(std::fs::metadata(&real).unwrap().mode() & 0o777, 0o600);
    let backup = PathBuf::from(format!("{}.planlog-backup", settings(&project).display()));
    assert_eq!(
        std::fs::metadata(&backup).unwrap().mode() & 0o777,
        0o600,
        "the backup too"
    );
    let at = |k: &str| written.find(&format!("\"{k}\"")).unwrap();
    assert!(
        at("zeta") < at("b") && at("b") < at("a") && at("a") < at("env"),
        "{written}"
    );
    assert!(
        at("env") < at("ANTHROPIC_API_KEY") && at("ANTHROPIC_API_KEY") < at("alpha"),
        "{written}"
    );
    assert!(
        written.starts_with("{\n    \"zeta\""),
        "four spaces, as it was: {written}"
    );
    assert_eq!(
        std::fs::metadata(&real).unwrap().ino(),
        std::fs::metadata(&hard).unwrap().ino()
    );
    // Uninstall gives back what was there, in that order.
    assert_eq!(uninstall(&p, &project).code, 0);
    let back = std::fs::read_to_string(&real).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&back).unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );
    assert!(back.find("\"zeta\"") < back.find("\"alpha\""));
}

#[test]
fn a_read_only_settings_file_is_left_alone_with_a_message() {
    let p = Planlog::new();
    let text = "{\"model\": \"opus\"}\n";
    let project = with_settings(&p, text);
    std::fs::set_permissions(settings(&project), std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = install(&p, &project, &[]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("is read-only") && r.stderr.contains("left it alone"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(settings(&project)).unwrap(), text);
    assert_eq!(
        std::fs::metadata(settings(&project)).unwrap().mode() & 0o777,
        0o444
    );
}

/// A FIFO where the settings file goes (a file planlog did not write): install, uninstall
/// and doctor read it without waiting for a writer, say what it is, and leave it. They
/// waited for ever.
#[test]
fn a_fifo_as_the_settings_file_is_said_not_waited_on() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let fifo = settings(&project);
    common::mkfifo(&fifo);
    let project_arg = project.to_str().unwrap().to_owned();
    for (args, code) in [
        (vec!["install", "claude-code", "--project", &project_arg], 2),
        (
            vec!["uninstall", "claude-code", "--project", &project_arg],
            2,
        ),
        (vec!["doctor"], 0),
    ] {
        let r = common::before_a_fifo_holds(&fifo, &format!("{args:?}"), || {
            run_in(&p, &args, BARE_PATH)
        });
        assert!(
            r.code == code || (code == 0 && r.code == 1),
            "{args:?}: {}",
            r.stderr
        );
        if code == 2 {
            assert!(
                r.stderr.contains("not a regular file"),
                "{args:?}: {}",
                r.stderr
            );
        }
    }
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn the_hooks_call_planlog_by_name_when_it_is_on_the_path() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    let bin = Path::new(env!("CARGO_BIN_EXE_planlog")).parent().unwrap();
    let path = format!("{}:{BARE_PATH}", bin.display());
    let r = run_in(
        &p,
        &[
            "install",
            "claude-code",
            "--project",
            project.to_str().unwrap(),
        ],
        &path,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let command = read(&settings(&project))["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(command.starts_with("planlog hook claude-code"), "{command}");
    assert!(
        r.stderr.contains("run `planlog` from the PATH"),
        "{}",
        r.stderr
    );
    // Off the PATH: this binary's full path, and a warning that others may not have it.
    let other = p.dir.path().join("other");
    let r = install(&p, &other, &[]);
    let command = read(&settings(&other))["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(command.starts_with('/'), "{command}");
    assert!(
        r.stderr.contains("other machines may not have"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_store_folder_of_a_git_project_keeps_itself_out_of_git() {
    let p = Planlog::new();
    let project = p.dir.path().join("repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    // The default store (no --db): the repository's .planlog/.
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_planlog"));
    let out = c
        .args(["install", "claude-code"])
        .current_dir(&project)
        .env_remove("PLANLOG_DB")
        .env("PATH", BARE_PATH)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let ignore = std::fs::read_to_string(project.join(".planlog/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
    assert!(
        stderr.contains(".planlog/ keeps itself out of git"),
        "{stderr}"
    );
    assert!(
        !project.join(".planlog/planlog.redb").exists(),
        "install creates no store"
    );
}

#[test]
fn the_installed_command_runs_as_claude_code_runs_it() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    assert_eq!(
        install(&p, &project, &["--every-prompt", "--enforce"]).code,
        0
    );
    let installed = read(&settings(&project));
    assert!(installed["hooks"]["UserPromptSubmit"].is_array());
    assert_eq!(
        installed["hooks"]["PreToolUse"][0]["matcher"],
        "TodoWrite|TaskCreate|TaskUpdate"
    );
    let command = installed["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(command.ends_with("--enforce"), "{command}");
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
    let broken = "{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n";
    let project = with_settings(&p, broken);
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
    assert!(serde_json::from_str::<Value>(&r.stdout).unwrap()["hooks"]["PostToolUse"].is_array());
    assert!(!settings(&project).exists());
    let r = install(&p, &project, &["--local"]);
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("on this machine only"), "{}", r.stderr);
    assert!(project.join(".claude/settings.local.json").exists());
    let home = p.dir.path().join("home");
    let r = p.run_env(
        &["install", "claude-code", "--user"],
        &[
            ("CLAUDE_CONFIG_DIR", home.to_str().unwrap()),
            ("PATH", BARE_PATH),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(home.join("settings.json").exists());
    assert!(
        r.stderr
            .contains("for every Claude Code session of this user in any project"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_plugin_folder_installs_the_same_hooks_and_its_marketplace_names_it() {
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("claude-plugin");
    let hooks = read(&plugin.join("hooks/hooks.json"));
    let manifest = read(&plugin.join(".claude-plugin/plugin.json"));
    assert_eq!(manifest["name"], "planlog");
    let expected = planlog_agents::settings::hooks_object(&planlog_agents::settings::HookSet {
        agent: planlog_agents::hook::Agent::ClaudeCode,
        command: "planlog hook claude-code".to_owned(),
        enforce: false,
        every_prompt: false,
        todo_tools: true,
    });
    let expected: Value = serde_json::to_value(&expected).unwrap();
    assert_eq!(hooks["hooks"], expected);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let market = read(&root.join(".claude-plugin/marketplace.json"));
    let entry = &market["plugins"][0];
    assert_eq!(entry["name"], "planlog");
    let source = root.join(entry["source"].as_str().unwrap());
    assert_eq!(
        source.canonicalize().unwrap(),
        plugin.canonicalize().unwrap(),
        "the marketplace points at the plugin folder"
    );
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

/// `planlog install codex`: the hooks merged into Codex's `hooks.json` (`$CODEX_HOME` with
/// `--user`) after the user's own, nothing but `hooks` added to the file (Codex refuses any
/// other top-level key), the plan tool switched on in `config.toml` beside it (appended to the
/// user's file, never rewritten), the trust step said; twice changes nothing; uninstall takes
/// only planlog's hooks out.
#[test]
fn install_codex_merges_hooks_json_turns_the_plan_tool_on_and_says_to_trust() {
    let p = Planlog::new();
    let codex_home = p.dir.path().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let hooks = codex_home.join("hooks.json");
    std::fs::write(
        &hooks,
        "{\n    \"hooks\": {\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-me\"}]}]\n    }\n}\n",
    )
    .unwrap();
    std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o640)).unwrap();
    let config = codex_home.join("config.toml");
    std::fs::write(&config, "model = \"gpt-5.5\"").unwrap();
    let env = [
        ("PATH", BARE_PATH),
        ("CODEX_HOME", codex_home.to_str().unwrap()),
    ];
    let r = p.run_env(&["install", "codex", "--user"], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for said in [
        "update_plan recorded",
        "turned Codex's plan tool on",
        "trust the new hooks",
    ] {
        assert!(r.stderr.contains(said), "missing {said:?}: {}", r.stderr);
    }
    let v = read(&hooks);
    assert_eq!(v.as_object().unwrap().keys().collect::<Vec<_>>(), ["hooks"]);
    let text = std::fs::read_to_string(&hooks).unwrap();
    let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap();
    assert!(
        at("Stop") < at("PostToolUse") && at("PostToolUse") < at("SessionStart"),
        "the user's group first: {text}"
    );
    assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "update_plan");
    assert_eq!(
        v["hooks"]["SessionStart"][0]["matcher"],
        "resume|clear|compact"
    );
    let command = v["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.ends_with(&format!("hook codex --db {}", p.db().display())),
        "{command}"
    );
    assert_eq!(
        std::fs::metadata(&hooks).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert!(
        std::fs::read_to_string(&hooks)
            .unwrap()
            .contains("\n    \"hooks\""),
        "indentation kept"
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "model = \"gpt-5.5\"\n\n# Added by planlog install codex: Codex's plan tool (update_plan), off by default.\n[tools.update_plan]\nenabled = true\n"
    );
    // Twice: nothing changes, the switch is not added again.
    let r = p.run_env(&["install", "codex", "--user"], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("nothing changed"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&config)
            .unwrap()
            .matches("[tools.update_plan]")
            .count(),
        1
    );
    // Enforcing adds the PreToolUse group, its command with --enforce; Codex has no local
    // settings file.
    let r = p.run_env(&["install", "codex", "--user", "--enforce"], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = read(&hooks);
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "update_plan");
    assert!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("--enforce")
    );
    assert_eq!(p.run_env(&["install", "codex", "--local"], &env).code, 2);
    // Uninstall: only planlog's hooks go; the switch stays, and that is said.
    let r = p.run_env(&["uninstall", "codex", "--user"], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("left Codex's plan tool switch"),
        "{}",
        r.stderr
    );
    let v = read(&hooks);
    assert_eq!(
        v["hooks"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["Stop"]
    );
}

/// `planlog install gemini`: Gemini CLI's `settings.json` (other settings and hooks kept, in
/// their order, the mode kept, a link written through), its groups as Gemini reads them
/// (anchored tool matchers, lifecycle events without a matcher, named handlers, timeouts in
/// milliseconds), the plan tool's availability and the trust steps said; twice is once;
/// `--print` writes nothing; uninstall takes out only planlog's.
#[test]
fn install_gemini_merges_settings_json_in_gemini_shape_and_uninstall_restores() {
    // (Install renders the JSON it merged: one value per line, the file's own indentation.)
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    let dot = project.join(".gemini");
    std::fs::create_dir_all(&dot).unwrap();
    let real = p.dir.path().join("shared-settings.json");
    let user_text = "{\n\t\"model\": {\"name\": \"gemini-2.5-pro\"},\n\t\"hooks\": {\n\t\t\"AfterTool\": [{\"matcher\": \"^run_shell_command$\", \"hooks\": [{\"name\": \"audit\", \"type\": \"command\", \"command\": \"audit-shell\", \"timeout\": 5000}]}]\n\t},\n\t\"general\": {\"vimMode\": true}\n}\n";
    std::fs::write(&real, user_text).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let settings = dot.join("settings.json");
    std::os::unix::fs::symlink(&real, &settings).unwrap();
    let env = [("PATH", BARE_PATH)];
    let project_arg = project.to_str().unwrap();
    let printed = p.run_env(
        &["install", "gemini", "--project", project_arg, "--print"],
        &env,
    );
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert_eq!(std::fs::read_to_string(&real).unwrap(), user_text);
    let r = p.run_env(&["install", "gemini", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for said in ["write_todos recorded", "Gemini 3", "trusted folder"] {
        assert!(r.stderr.contains(said), "missing {said:?}: {}", r.stderr);
    }
    assert_eq!(std::fs::read_to_string(&real).unwrap(), printed.stdout);
    assert!(
        std::fs::symlink_metadata(&settings)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let v = read(&real);
    let text = std::fs::read_to_string(&real).unwrap();
    let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap();
    let order = [
        "model",
        "hooks",
        "AfterTool",
        "SessionStart",
        "PreCompress",
        "BeforeAgent",
        "SessionEnd",
        "general",
    ];
    assert!(
        order.windows(2).all(|w| at(w[0]) < at(w[1])),
        "keys in their order: {text}"
    );
    let hooks = &v["hooks"];
    assert_eq!(hooks.as_object().unwrap().len(), 5);
    // The user's AfterTool group first, then planlog's, anchored (Gemini tests matchers
    // unanchored).
    assert_eq!(hooks["AfterTool"][0]["hooks"][0]["command"], "audit-shell");
    assert_eq!(
        hooks["AfterTool"][1]["matcher"],
        "^(write_todos|tracker_create_task|tracker_update_task|tracker_add_dependency)$"
    );
    let ours = &hooks["AfterTool"][1]["hooks"][0];
    assert_eq!(ours["name"], "planlog");
    assert_eq!(ours["timeout"], 10_000, "milliseconds");
    assert!(
        ours["command"]
            .as_str()
            .unwrap()
            .ends_with(&format!("hook gemini --db {}", p.db().display())),
        "{ours}"
    );
    for event in ["SessionStart", "PreCompress", "BeforeAgent", "SessionEnd"] {
        assert!(
            hooks[event][0].get("matcher").is_none(),
            "{event}: Gemini matches lifecycle events exactly; planlog filters itself"
        );
    }
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("\n\t\"hooks\"")
    );
    // Twice is once.
    let r = p.run_env(&["install", "gemini", "--project", project_arg], &env);
    assert!(r.stderr.contains("nothing changed"), "{}", r.stderr);
    // Enforcing adds BeforeTool; Gemini has no local settings file.
    let r = p.run_env(
        &["install", "gemini", "--project", project_arg, "--enforce"],
        &env,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        read(&real)["hooks"]["BeforeTool"][0]["matcher"],
        "^(write_todos)$"
    );
    assert_eq!(
        p.run_env(
            &["install", "gemini", "--project", project_arg, "--local"],
            &env
        )
        .code,
        2
    );
    // The user's own settings file, under GEMINI_CLI_HOME.
    let home = p.dir.path().join("gemini-home");
    let r = p.run_env(
        &["install", "gemini", "--user"],
        &[
            ("PATH", BARE_PATH),
            ("GEMINI_CLI_HOME", home.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(read(&home.join(".gemini/settings.json"))["hooks"]["AfterTool"].is_array());
    // Uninstall: the user's settings again, keys in their order, indented as they were.
    let r = p.run_env(&["uninstall", "gemini", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let back = std::fs::read_to_string(&real).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&back).unwrap(),
        serde_json::from_str::<Value>(user_text).unwrap()
    );
    assert!(back.find("\"model\"") < back.find("\"general\"") && back.contains("\n\t\"hooks\""));
}

/// `planlog install opencode`: planlog's plugin in the project's `.opencode/plugins` (or the
/// user's, under `$XDG_CONFIG_HOME/opencode`), running this planlog with the named store;
/// `--print` writes nothing; twice is once; a file planlog did not write at that path is left
/// alone, by install and uninstall; `--enforce` and `--local` are refused with why.
#[test]
fn install_opencode_writes_its_plugin_and_leaves_a_foreign_file_alone() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let env = [("PATH", BARE_PATH)];
    let project_arg = project.to_str().unwrap();
    let plugin = project.join(".opencode/plugins/planlog.ts");
    let printed = p.run_env(
        &["install", "opencode", "--project", project_arg, "--print"],
        &env,
    );
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert!(!plugin.exists());
    let r = p.run_env(&["install", "opencode", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("opencode loads it when it starts"),
        "{}",
        r.stderr
    );
    let text = std::fs::read_to_string(&plugin).unwrap();
    assert_eq!(text, printed.stdout);
    assert!(text.starts_with("// planlog's opencode plugin:"));
    let argv: Vec<String> = serde_json::from_str(
        text.lines()
            .find_map(|l| l.strip_prefix("const COMMAND: string[] = "))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        argv[1..],
        ["hook", "opencode", "--db", p.db().to_str().unwrap()]
    );
    assert!(
        Path::new(&argv[0]).is_absolute(),
        "planlog is not on this PATH: {argv:?}"
    );
    assert!(!text.contains("__PLANLOG_"), "every placeholder filled");
    let r = p.run_env(&["install", "opencode", "--project", project_arg], &env);
    assert!(r.stderr.contains("nothing changed"), "{}", r.stderr);
    let r = p.run_env(
        &["install", "opencode", "--project", project_arg, "--local"],
        &env,
    );
    assert_eq!(r.code, 2, "--local: {}", r.stderr);
    // Enforcing: the plugin's command carries --enforce (the plugin then asks planlog before
    // each todowrite runs), and install says what that does.
    let r = p.run_env(
        &["install", "opencode", "--project", project_arg, "--enforce"],
        &env,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("is refused before it runs"),
        "{}",
        r.stderr
    );
    let text = std::fs::read_to_string(&plugin).unwrap();
    assert!(
        text.contains("\"--enforce\"]") && text.contains("\"tool.execute.before\""),
        "{text}"
    );
    // The user's plugin folder.
    let config = p.dir.path().join("config");
    let r = p.run_env(
        &["install", "opencode", "--user"],
        &[
            ("PATH", BARE_PATH),
            ("XDG_CONFIG_HOME", config.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(config.join("opencode/plugins/planlog.ts").exists());
    // Uninstall removes planlog's own file.
    let r = p.run_env(&["uninstall", "opencode", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!plugin.exists());
    // A file of the user's at that path: left alone by both.
    std::fs::write(&plugin, "export const Mine = async () => ({})\n").unwrap();
    for action in ["install", "uninstall"] {
        let r = p.run_env(&[action, "opencode", "--project", project_arg], &env);
        assert_eq!(r.code, 2, "{action}: {}", r.stderr);
        assert!(
            r.stderr.contains("a file planlog did not write"),
            "{}",
            r.stderr
        );
        assert_eq!(
            std::fs::read_to_string(&plugin).unwrap(),
            "export const Mine = async () => ({})\n"
        );
    }
}

/// `planlog install copilot`: planlog's own hooks file in the project's `.github/hooks` (or
/// `$COPILOT_HOME/hooks`), in Copilot's format (`version` 1, flat `bash` handlers, seconds),
/// each event's command naming its event; `--print` writes nothing; twice is once; a link to
/// it is followed and its mode kept; a file planlog did not write at that path is left alone
/// by install and uninstall; `--enforce` adds the `preToolUse` hook; `--local` is refused with
/// why.
#[test]
fn install_copilot_writes_its_own_hooks_file() {
    use std::os::unix::fs::PermissionsExt;
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    std::fs::create_dir_all(&project).unwrap();
    let env = [("PATH", BARE_PATH)];
    let project_arg = project.to_str().unwrap();
    let file = project.join(".github/hooks/planlog.json");
    let printed = p.run_env(
        &["install", "copilot", "--project", project_arg, "--print"],
        &env,
    );
    assert_eq!(printed.code, 0, "{}", printed.stderr);
    assert!(!file.exists());
    let r = p.run_env(&["install", "copilot", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("Copilot ignores what its hooks print")
            && r.stderr.contains("not confirmed"),
        "{}",
        r.stderr
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text, printed.stdout);
    let hooks: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(hooks["version"], 1);
    let events: Vec<&str> = hooks["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        events,
        ["notification", "postToolUse", "preCompact", "sessionEnd"]
    );
    for (event, handlers) in hooks["hooks"].as_object().unwrap() {
        let h = &handlers[0];
        assert_eq!(
            (h["type"].as_str(), h["timeoutSec"].as_u64()),
            (Some("command"), Some(10))
        );
        let bash = h["bash"].as_str().unwrap();
        assert!(
            bash.ends_with(&format!(
                " hook copilot --db {} --event {event}",
                p.db().to_str().unwrap()
            )),
            "{bash}"
        );
    }
    let r = p.run_env(&["install", "copilot", "--project", project_arg], &env);
    assert!(r.stderr.contains("nothing changed"), "{}", r.stderr);
    let r = p.run_env(
        &["install", "copilot", "--project", project_arg, "--local"],
        &env,
    );
    assert_eq!(r.code, 2, "--local: {}", r.stderr);
    // Enforcing adds a preToolUse hook whose command carries --enforce.
    let enforcing = p.run_env(
        &[
            "install",
            "copilot",
            "--project",
            project_arg,
            "--enforce",
            "--print",
        ],
        &env,
    );
    assert_eq!(enforcing.code, 0, "{}", enforcing.stderr);
    let hooks: Value = serde_json::from_str(&enforcing.stdout).unwrap();
    let guard = hooks["hooks"]["preToolUse"][0]["bash"].as_str().unwrap();
    assert!(guard.contains(" --enforce --event preToolUse"), "{guard}");
    // A link to it, and its mode, kept when install writes it again (the file was reindented).
    let real = project.join("shared-planlog.json");
    std::fs::rename(&file, &real).unwrap();
    std::os::unix::fs::symlink(&real, &file).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::write(&real, text.replace("  ", "    ")).unwrap();
    let r = p.run_env(&["install", "copilot", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        std::fs::symlink_metadata(&file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), text);
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    // The user's folder.
    let copilot_home = p.dir.path().join("copilot-home");
    let r = p.run_env(
        &["install", "copilot", "--user"],
        &[
            ("PATH", BARE_PATH),
            ("COPILOT_HOME", copilot_home.to_str().unwrap()),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(copilot_home.join("hooks/planlog.json").exists());
    // Uninstall removes planlog's own file.
    let r = p.run_env(&["uninstall", "copilot", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!file.exists() && !real.exists());
    // A file of the user's at that path: left alone by both.
    let mine =
        r#"{"version": 1, "hooks": {"postToolUse": [{"type": "command", "bash": "./audit.sh"}]}}"#;
    std::fs::write(&file, mine).unwrap();
    for action in ["install", "uninstall"] {
        let r = p.run_env(&[action, "copilot", "--project", project_arg], &env);
        assert_eq!(r.code, 2, "{action}: {}", r.stderr);
        assert!(
            r.stderr.contains("a file planlog did not write"),
            "{}",
            r.stderr
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), mine);
    }
}

/// `planlog install cursor`: Cursor's flat `hooks.json` (`version` 1, entries without matcher
/// groups), the user's entries kept in order; twice is once; uninstall takes out only
/// planlog's; what is not confirmed about Cursor is said.
#[test]
fn install_cursor_merges_its_flat_hooks_json() {
    let p = Planlog::new();
    let project = p.dir.path().join("app");
    let file = project.join(".cursor/hooks.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let user_text = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"postToolUse\": [\n      {\n        \"command\": \"./audit.sh\"\n      }\n    ]\n  }\n}\n";
    std::fs::write(&file, user_text).unwrap();
    let env = [("PATH", BARE_PATH)];
    let project_arg = project.to_str().unwrap();
    let r = p.run_env(&["install", "cursor", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("no source planlog has confirms"),
        "{}",
        r.stderr
    );
    let v = read(&file);
    assert_eq!(v["version"], 1);
    let post = v["hooks"]["postToolUse"].as_array().unwrap();
    assert_eq!(post[0]["command"], "./audit.sh");
    assert_eq!(post[1]["matcher"], "TodoWrite|todo_write");
    assert!(
        post[1]["command"]
            .as_str()
            .unwrap()
            .ends_with(&format!("hook cursor --db {}", p.db().display()))
    );
    assert!(v["hooks"]["sessionStart"][0]["command"].is_string());
    assert!(v["hooks"]["preCompact"][0]["command"].is_string());
    let r = p.run_env(&["install", "cursor", "--project", project_arg], &env);
    assert!(r.stderr.contains("nothing changed"), "{}", r.stderr);
    assert_eq!(
        p.run_env(
            &["install", "cursor", "--project", project_arg, "--enforce"],
            &env
        )
        .code,
        2
    );
    let r = p.run_env(&["uninstall", "cursor", "--project", project_arg], &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        read(&file),
        serde_json::from_str::<Value>(user_text).unwrap()
    );
    // A new file gets its version first.
    std::fs::remove_file(&file).unwrap();
    assert_eq!(
        p.run_env(&["install", "cursor", "--project", project_arg], &env)
            .code,
        0
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.find("\"version\"") < text.find("\"hooks\""), "{text}");
}
