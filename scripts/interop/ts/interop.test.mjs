// Custody against the official MCP TypeScript SDK client (pinned in
// package.json and package-lock.json beside this file). scripts/conformance
// (`make conformance`) installs it into .tools/interop-ts and runs it with
// `node --test` against the dev server with the conformance fixture profile
// and a small list page size:
//
//   CUSTODY_MCP_URL    the /mcp endpoint
//   CUSTODY_KEY        a Custody key of the demo firm (the dev key)
//   CUSTODY_PAGE_SIZE  the server's list page size
//
// Two clients, each a 2025-11-25 session over streamable HTTP: one with the
// Custody key, which pages every list Custody serves and reads, gets and
// calls through them; one without a credential, which the fixture profile
// authenticates as its fixture key, and which answers the fixtures' form
// elicitation and sampling request from its own request handlers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const url = new URL(required('CUSTODY_MCP_URL'));
const key = required('CUSTODY_KEY');
const pageSize = Number(required('CUSTODY_PAGE_SIZE'));

function required(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (scripts/conformance sets it)`);
  return v;
}

// connect opens a session; headers go on every request.
async function connect(name, headers, capabilities = {}) {
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

// pageAll follows nextCursor to the end of a list and returns every item
// and the number of pages; it fails on a repeated cursor or item.
async function pageAll(list, field, id) {
  const items = [];
  const cursors = new Set();
  let cursor;
  let pages = 0;
  do {
    const res = await list(cursor === undefined ? {} : { cursor });
    pages++;
    assert.ok(Array.isArray(res[field]), `page ${pages} has no ${field} array`);
    assert.ok(res[field].length <= pageSize, `page ${pages} holds ${res[field].length} ${field}, more than the page size ${pageSize}`);
    items.push(...res[field]);
    cursor = res.nextCursor;
    if (cursor !== undefined) {
      assert.ok(!cursors.has(cursor), `cursor repeated on page ${pages}`);
      cursors.add(cursor);
    }
  } while (cursor !== undefined);
  const ids = items.map(id);
  assert.equal(new Set(ids).size, ids.length, `duplicate ${field}: ${ids}`);
  if (items.length > pageSize) {
    assert.ok(pages > 1, `${items.length} ${field} in one page of ${pageSize}`);
  }
  return { items, pages };
}

function textOf(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

describe('a Custody key', () => {
  let client, transport;
  before(async () => {
    ({ client, transport } = await connect('custody-interop', { Authorization: `Bearer ${key}` }));
  });
  after(async () => {
    await transport?.terminateSession();
    await client?.close();
  });

  test('negotiates 2025-11-25 with a session', () => {
    assert.equal(transport.protocolVersion, '2025-11-25');
    assert.ok(transport.sessionId, 'no Mcp-Session-Id');
    assert.equal(client.getServerVersion()?.name, 'custody');
  });

  test('pages every tool and sees no fixture', async () => {
    const { items } = await pageAll((p) => client.listTools(p), 'tools', (t) => t.name);
    const names = items.map((t) => t.name);
    for (const want of ['list_matters', 'get_matter']) {
      assert.ok(names.includes(want), `${want} missing from ${names}`);
    }
    assert.deepEqual(names.filter((n) => n.startsWith('test_') || n.startsWith('json_schema')), []);
    for (const t of items) {
      assert.ok(t.description, `${t.name} has no description`);
      assert.equal(t.inputSchema.type, 'object');
    }
  });

  test('calls a tool and gets its structured envelope', async () => {
    await pageAll((p) => client.listTools(p), 'tools', (t) => t.name); // the SDK validates against outputSchema
    const res = await client.callTool({ name: 'list_matters', arguments: {} });
    assert.notEqual(res.isError, true, textOf(res));
    assert.ok(Array.isArray(res.structuredContent?.results), JSON.stringify(res.structuredContent));
    assert.ok(res.structuredContent.results.length > 0);
  });
});

describe('the fixture profile (no credential)', () => {
  let client, transport;
  const asked = { elicitation: [], sampling: [] };
  const logs = [];
  before(async () => {
    const c = new Client(
      { name: 'custody-interop-fixtures', version: '1.0.0' },
      { capabilities: { sampling: {}, elicitation: { form: {} } } },
    );
    c.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.elicitation.push(req.params);
      return { action: 'accept', content: { username: 'interop-user', email: 'interop@example.com' } };
    });
    c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked.sampling.push(req.params);
      return {
        role: 'assistant',
        content: { type: 'text', text: 'sampled by the interop client' },
        model: 'interop-model',
        stopReason: 'endTurn',
      };
    });
    c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
    transport = new StreamableHTTPClientTransport(url);
    await c.connect(transport);
    client = c;
  });
  after(async () => {
    await transport?.terminateSession();
    await client?.close();
  });

  test('pages the fixture tools and sees no Custody tool', async () => {
    const { items } = await pageAll((p) => client.listTools(p), 'tools', (t) => t.name);
    const names = items.map((t) => t.name);
    assert.ok(names.includes('test_simple_text') && names.includes('test_elicitation'), `${names}`);
    assert.ok(!names.includes('list_matters'), `a Custody tool is visible: ${names}`);
  });

  test('answers a form elicitation from its own handler', async () => {
    const res = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    assert.notEqual(res.isError, true, textOf(res));
    assert.equal(asked.elicitation.length, 1);
    const p = asked.elicitation[0];
    assert.equal(p.message, 'Who are you?');
    assert.deepEqual(p.requestedSchema.required, ['username', 'email']);
    assert.match(textOf(res), /action=accept/);
    assert.match(textOf(res), /interop-user/);
  });

  test('answers a sampling request from its own handler', async () => {
    const res = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Say hello' } });
    assert.notEqual(res.isError, true, textOf(res));
    assert.equal(asked.sampling.length, 1);
    assert.equal(asked.sampling[0].messages[0].content.text, 'Say hello');
    assert.equal(textOf(res), 'LLM response: sampled by the interop client');
  });

  test('receives progress before the result', async () => {
    const seen = [];
    const res = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.notEqual(res.isError, true, textOf(res));
    assert.deepEqual(seen, [0, 50, 100]);
  });

  test('receives log messages at its level', async () => {
    await client.setLoggingLevel('info');
    logs.length = 0;
    const res = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    assert.notEqual(res.isError, true, textOf(res));
    assert.deepEqual(logs.map((l) => l.data), ['Tool execution started', 'Tool processing data', 'Tool execution completed']);
  });
});
