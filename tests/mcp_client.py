"""Drives `planlog mcp` with the official Python MCP SDK (the `mcp` package): a client
written by others, in another language. Run by .ci/run when Python is available:

    python tests/mcp_client.py PATH/TO/planlog

Pinned SDK version: see .ci/run. Exits non-zero (with the failed check) on any divergence.
"""

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result) -> str:
    return result.content[0].text


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "planlog.redb")
        params = StdioServerParameters(command=binary, args=["--db", db, "mcp", "--session", "py-client"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                tools = (await session.list_tools()).tools
                names = [t.name for t in tools]
                assert names == ["plan_write", "plan_history"], names
                schema = tools[0].input_schema
                assert schema["properties"]["steps"]["maxItems"] == 200, schema
                assert schema["properties"]["steps"]["items"]["required"] == ["id", "content", "status"], schema

                steps = [
                    {"id": "1", "content": "Write the parser", "status": "in_progress"},
                    {"id": "2", "content": "Test it", "status": "pending"},
                ]
                ok = await session.call_tool("plan_write", {"steps": steps})
                assert not ok.is_error, text_of(ok)
                assert json.loads(text_of(ok)) == steps

                forged = await session.call_tool(
                    "plan_write",
                    {"steps": [
                        {"id": "2", "content": "Test it", "status": "completed"},
                        {"id": "3", "content": "Ship", "status": "completed"},
                    ]},
                )
                assert forged.is_error, "a bulk completion must be refused"
                assert "bulk completion" in text_of(forged)

                read = await session.call_tool("plan_write", {})
                assert json.loads(text_of(read)) == steps, "a read returns the unchanged plan"

                resource = await session.read_resource("plan://current")
                assert "[>] Write the parser" in resource.contents[0].text

                bad = await session.call_tool("plan_write", {"steps": [{"id": "1", "content": "x", "status": "done"}]})
                assert bad.is_error and "pending, in_progress, completed, cancelled" in text_of(bad)

                try:
                    unknown = await session.call_tool("no_such_tool", {})
                    # This SDK may turn the JSON-RPC error into an error result instead.
                    assert unknown.is_error, "an unknown tool must fail"
                except Exception as e:  # the JSON-RPC error itself
                    assert "unknown tool" in str(e), e

                history = await session.call_tool("plan_history", {})
                lines = text_of(history).splitlines()
                assert len(lines) == 4, lines  # started, write, bulk rejected, unknown-status rejected


async def audited(binary: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "planlog.redb")
        params = StdioServerParameters(command=binary, args=["--db", db, "mcp", "--session", "audited"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for i in range(3):
                    r = await session.call_tool(
                        "plan_write", {"steps": [{"id": str(i), "content": f"step {i}", "status": "in_progress"}]}
                    )
                    assert not r.is_error, text_of(r)
        audit = subprocess.run([binary, "--db", db, "history", "audited"], capture_output=True, text=True, check=True)
        lines = audit.stdout.splitlines()
        assert len(lines) == 4, audit.stdout
        assert all("plan_written" in line for line in lines[1:]), audit.stdout


async def tasks(binary: str) -> None:
    """The task tools (Claude Code's Tasks schemas) and two servers on one list."""
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "planlog.redb")
        params = StdioServerParameters(command=binary, args=["--db", db, "mcp", "--session", "list", "--tools", "tasks"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert "task_list" in (init.instructions or ""), init.instructions
                names = [t.name for t in (await session.list_tools()).tools]
                assert names == ["task_create", "task_update", "task_get", "task_list", "task_claim", "task_release", "plan_history"], names
                created = await session.call_tool("task_create", {"subject": "Parse", "activeForm": "Parsing"})
                assert not created.is_error and text_of(created).startswith("Task #1 created successfully"), text_of(created)
                async with stdio_client(params) as (read2, write2):
                    async with ClientSession(read2, write2) as other:
                        await other.initialize()
                        # The other agent sees the task, and its update lands.
                        got = json.loads(text_of(await other.call_tool("task_get", {"taskId": "1"})))
                        assert got["task"]["subject"] == "Parse", got
                        both = await asyncio.gather(
                            session.call_tool("task_update", {"taskId": "1", "status": "in_progress"}),
                            other.call_tool("task_update", {"taskId": 1, "owner": "b"}),
                        )
                        assert all(not r.is_error for r in both), [text_of(r) for r in both]
                        # Both claim one task at once: exactly one holds it.
                        await session.call_tool("task_create", {"subject": "Ship"})
                        claims = await asyncio.gather(
                            session.call_tool("task_claim", {"taskId": "2", "owner": "a"}),
                            other.call_tool("task_claim", {"taskId": "2", "owner": "b"}),
                        )
                        won = [r for r in claims if not r.is_error]
                        assert len(won) == 1, [text_of(r) for r in claims]
                        lost = [text_of(r) for r in claims if r.is_error]
                        assert "is held by" in lost[0], lost
                listed = json.loads(text_of(await session.call_tool("task_list", {})))
                assert listed["tasks"][0] == {"id": "1", "subject": "Parse", "status": "in_progress", "owner": "b", "blockedBy": []}, listed
                assert listed["tasks"][1]["status"] == "in_progress" and listed["tasks"][1]["owner"] in ("a", "b"), listed
                refused = await session.call_tool("task_update", {"taskId": "1", "addBlockedBy": ["1"]})
                assert refused.is_error and "blocked by itself" in text_of(refused), text_of(refused)


if __name__ == "__main__":
    binary = sys.argv[1]
    asyncio.run(main(binary))
    asyncio.run(audited(binary))
    asyncio.run(tasks(binary))
    print("mcp_client.py: the Python MCP SDK client passed every check")
