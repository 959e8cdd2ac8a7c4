// planlog's opencode plugin: forwards opencode's plan tool (todowrite) and its compactions to
// `planlog hook opencode`, which records every plan change in the session an import of the
// session's export writes (oc-<session id>) and gives the plan back when opencode compacts
// the session, so the summary the model goes on from keeps it. Installed with --enforce, it
// also asks planlog before each todowrite runs, with opencode's todo list as it stands, and
// refuses the call when planlog's rules do (the model reads why as the tool's error).
//
// Written by `planlog install opencode` (which fills in COMMAND); its source is
// replay/agents/opencode/planlog.ts in planlog's repository. It never breaks opencode: when
// planlog cannot run, or fails, opencode goes on as if the plugin were not there.
import type { Plugin } from "@opencode-ai/plugin"

/** The command that runs planlog's hook, as argv. */
const COMMAND: string[] = __PLANLOG_COMMAND__

/** Whether planlog's rules may refuse a todowrite before it runs (install --enforce). */
const ENFORCE = COMMAND.includes("--enforce")

/** How long opencode waits for planlog (opencode has no hook timeout of its own). */
const TIMEOUT_MS = 10_000

/** Sends one hook input to planlog: its exit code and what it printed (killed after
 * TIMEOUT_MS: the call then goes on as if the plugin were not there). */
async function send(input: Record<string, unknown>): Promise<{ code: number; out: string; err: string }> {
  try {
    const proc = Bun.spawn(COMMAND, {
      stdin: new TextEncoder().encode(JSON.stringify(input)),
      stdout: "pipe",
      stderr: "pipe",
    })
    let timer: ReturnType<typeof setTimeout> | undefined
    // Not waited for past the timeout: a child of what was killed may hold its pipes open.
    const late = new Promise<{ code: number; out: string; err: string }>((resolve) => {
      timer = setTimeout(() => {
        proc.kill()
        resolve({ code: -1, out: "", err: `planlog took longer than ${TIMEOUT_MS} ms` })
      }, TIMEOUT_MS)
    })
    const done = Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]).then(([out, err, code]) => ({ code: proc.signalCode ? -1 : code, out, err }))
    try {
      return await Promise.race([done, late])
    } finally {
      clearTimeout(timer)
    }
  } catch (e) {
    return { code: -1, out: "", err: String(e) }
  }
}

/** The text planlog asks to add to the model's context, if any. */
function context(out: string): string | undefined {
  try {
    const text = JSON.parse(out)?.hookSpecificOutput?.additionalContext
    return typeof text === "string" && text.trim() ? text : undefined
  } catch {
    return undefined
  }
}

export const Planlog: Plugin = async ({ directory, client }) => {
  const base = (sessionID: string, event: string) => ({
    hook_event_name: event,
    session_id: sessionID,
    cwd: directory,
  })
  /** opencode's todo list for the session as it stands, or undefined when it cannot say. */
  const todosNow = async (sessionID: string): Promise<unknown[] | undefined> => {
    try {
      const r = await client.session.todo({ path: { id: sessionID } })
      return Array.isArray(r.data) ? r.data : undefined
    } catch {
      return undefined
    }
  }
  return {
    "tool.execute.before": async (input, output) => {
      if (!ENFORCE || input.tool !== "todowrite") return
      const r = await send({
        ...base(input.sessionID, "PreToolUse"),
        tool_name: "todowrite",
        tool_input: output.args,
        tool_use_id: input.callID,
        todos_now: await todosNow(input.sessionID),
      })
      // Exit 2 is planlog's refusal, its reason on stderr; anything else lets the call run.
      if (r.code === 2) throw new Error(r.err.trim() || "planlog's rules refuse this todowrite")
    },
    "tool.execute.after": async (input, output) => {
      if (input.tool !== "todowrite") return
      await send({
        ...base(input.sessionID, "PostToolUse"),
        tool_name: "todowrite",
        tool_input: (input as { args?: unknown }).args ?? { todos: output.metadata?.todos },
        tool_use_id: input.callID,
        tool_response: { output: output.output, metadata: output.metadata },
      })
    },
    "experimental.session.compacting": async (input, output) => {
      const r = await send({ ...base(input.sessionID, "PreCompact"), source: "compact" })
      const text = r.code === 0 ? context(r.out) : undefined
      if (text) output.context.push(text)
    },
  }
}
