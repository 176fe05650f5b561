"""An MCP server (stdio, newline-delimited JSON-RPC) that misbehaves: it
answers the handshake and lists two tools. `boom` exits with status 3
without answering; `stall` never answers (the server goes on reading).
The tests use it to prove that a server dying or hanging mid-call is a
failed invocation, never a hang."""

import json
import os
import sys

# Each start is one line in this file, when set: the tests count starts.
starts = os.environ.get("MCP_STARTS_FILE")
if starts:
    with open(starts, "a", encoding="utf-8") as f:
        f.write("start\n")

for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method = message.get("method")
    if "id" not in message:
        continue  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "crash", "version": "1"},
        }
    elif method == "tools/list":
        result = {
            "tools": [
                {
                    "name": "boom",
                    "description": "exits when called",
                    "inputSchema": {"type": "object"},
                },
                {
                    "name": "stall",
                    "description": "never answers",
                    "inputSchema": {"type": "object"},
                },
            ]
        }
    elif method == "tools/call" and message["params"].get("name") == "stall":
        continue
    elif method == "tools/call":
        sys.stderr.write("boom: exiting on purpose\n")
        sys.stderr.flush()
        sys.exit(3)
    else:
        reply = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "error": {"code": -32601, "message": "method not found"},
        }
        print(json.dumps(reply), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
