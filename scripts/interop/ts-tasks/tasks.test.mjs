// Custody's 2026-07-28 tasks extension (io.modelcontextprotocol/tasks)
// against clients nobody here wrote: the official MCP TypeScript v2 client
// (@modelcontextprotocol/client, pinned to 2026-07-28) and the extension's
// own requester, @modelcontextprotocol/ext-tasks (both pinned with the
// lockfile beside this file). shared/tasks TestInteropTypeScriptV2ClientWithExtTasks
// installs them into .tools/interop-ts-tasks and runs this file with
// `node --test` against an in-process Custody serving tasks:
//
//   CUSTODY_MCP_URL     the /mcp endpoint
//   CUSTODY_KEY         a Custody key of the demo firm
//   CUSTODY_CASE_ID     a matter the key reaches (export_fact_record)
//   CUSTODY_ASK_TOOL    a task tool that asks one form question ("answer")
//   CUSTODY_GATED_TOOL  a task tool that runs until it is cancelled
//
// ext-tasks drives the task (creation, polling tasks/get, the input round
// through tasks/update, cancellation); as its documentation asks of a host
// for a 2026-07-28 server, this file gives it the raw request path
// (rawDispatch: the POST with the revision's headers, Mcp-Param-* from the
// tools' x-mcp-header annotations included) and the request framing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const url = new URL(required('CUSTODY_MCP_URL'));
const key = required('CUSTODY_KEY');
const caseID = required('CUSTODY_CASE_ID');
const askTool = required('CUSTODY_ASK_TOOL');
const gatedTool = required('CUSTODY_GATED_TOOL');

function required(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (the Go test sets it)`);
  return v;
}

const revision = '2026-07-28';
const clientInfo = { name: 'custody-interop-ts-tasks', version: '1.0.0' };
const clientCapabilities = { elicitation: { form: {} } };

// paramHeaders maps each tool to its arguments annotated with x-mcp-header
// (SEP-2243): a 2026-07-28 tools/call repeats them as Mcp-Param-* headers.
const paramHeaders = new Map();

let nextID = 1;

// nameOf is the params member the Mcp-Name header repeats.
function nameOf(method, params) {
  switch (method) {
    case 'tools/call':
    case 'prompts/get':
      return params?.name;
    case 'resources/read':
      return params?.uri;
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      return params?.taskId;
  }
  return undefined;
}

// readAnswer returns the JSON-RPC response with id from a JSON or SSE body.
async function readAnswer(res, id) {
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream')) return res.json();
  const text = await res.text();
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (!data) continue;
    const msg = JSON.parse(data);
    if (msg.id === id && ('result' in msg || 'error' in msg)) return msg;
  }
  throw new Error(`no response to request ${id} in the event stream`);
}

const requests = [];

// rawDispatch is the host's request path that ext-tasks asks for.
async function rawDispatch(request, options = {}) {
  const id = nextID++;
  const body = { jsonrpc: '2.0', id, ...request };
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${key}`,
    'MCP-Protocol-Version': revision,
    'Mcp-Method': request.method,
  };
  const name = nameOf(request.method, request.params);
  if (name !== undefined) headers['Mcp-Name'] = String(name);
  if (request.method === 'tools/call') {
    for (const [prop, header] of paramHeaders.get(request.params.name) ?? []) {
      const v = request.params.arguments?.[prop];
      if (v !== undefined && v !== null) headers[`Mcp-Param-${header}`] = String(v);
    }
  }
  Object.assign(headers, options.context?.headers ?? {});
  requests.push(request.method);
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: options.signal });
  const msg = await readAnswer(res, id);
  if (msg.error) return { kind: 'error', error: msg.error };
  return { kind: 'result', result: msg.result };
}

describe('the TypeScript v2 client with ext-tasks 0.2.x, at 2026-07-28', () => {
  let client;
  let session;
  const asked = [];

  before(async () => {
    client = new Client(clientInfo, { capabilities: clientCapabilities, versionNegotiation: { mode: { pin: revision } } });
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
    await client.connect(transport);
    let cursor;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      for (const tool of page.tools) {
        const annotated = [];
        for (const [prop, schema] of Object.entries(tool.inputSchema?.properties ?? {})) {
          if (typeof schema?.['x-mcp-header'] === 'string') annotated.push([prop, schema['x-mcp-header']]);
        }
        paramHeaders.set(tool.name, annotated);
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    session = createTaskSessionFromClient(client, {
      endpointId: 'custody-interop-ts-tasks',
      rawDispatch,
      v2RequestFraming: { protocolVersion: revision, clientInfo, clientCapabilities },
      onInputRequest: async (request, context) => {
        asked.push({ request, context });
        assert.equal(request.kind, 'elicitation');
        return { action: 'accept', content: { answer: 'from the TypeScript client' } };
      },
    });
  });

  after(async () => {
    await session?.close();
    await client?.close();
  });

  test('the client negotiated the modern era and found the tasks extension', () => {
    assert.equal(client.getProtocolEra(), 'modern');
    assert.deepEqual(client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/tasks'], {});
    assert.equal(session.capabilities.execution, true);
    assert.equal(session.capabilities.inputResponses, true);
  });

  test('a Custody tool runs as a task end to end: created, polled, its result inline', async () => {
    const execution = await session.callTool('export_fact_record', { case_id: caseID });
    assert.equal(execution.kind, 'task', 'the server made the call a task');
    const { outcome } = await execution.settle();
    const result = resultFromTaskOutcome(outcome);
    assert.equal(result.isError ?? false, false, JSON.stringify(result));
    const link = result.content.find((c) => c.type === 'resource_link');
    assert.ok(link?.uri?.startsWith(`custody://matters/${caseID}/exports/`), JSON.stringify(result.content));
  });

  test('a task that asks is answered through one tasks/update round and completes with the answer', async () => {
    const before = requests.filter((m) => m === 'tasks/update').length;
    const execution = await session.callTool(askTool, { question: 'Proceed?' });
    assert.equal(execution.kind, 'task');
    const { outcome } = await execution.settle();
    const result = resultFromTaskOutcome(outcome);
    const text = result.content.map((c) => c.text).join('');
    assert.match(text, /from the TypeScript client/);
    assert.equal(asked.length, 1, 'the question was asked once');
    assert.equal(asked[0].context.delivery, 'task-update');
    assert.equal(requests.filter((m) => m === 'tasks/update').length - before, 1, 'one tasks/update round');
  });

  test('a running task is cancelled', async () => {
    const execution = await session.callTool(gatedTool, {});
    assert.equal(execution.kind, 'task');
    await execution.cancel();
    const { outcome } = await execution.settle();
    assert.equal(outcome.status, 'cancelled');
  });
});
