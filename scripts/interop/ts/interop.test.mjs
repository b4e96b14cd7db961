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
// elicitation and sampling request from its own request handlers. Both run
// tasks through the SDK's experimental tasks client: the key exports a fact
// record and audits citations as tasks (create, poll tasks/get,
// tasks/result), the fixture key cancels a long task.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
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
  let client, transport, caseID;
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
    caseID = res.structuredContent.results[0].case_id;
  });

  test('pages every prompt and gets one for a matter', async () => {
    const { items } = await pageAll((p) => client.listPrompts(p), 'prompts', (p) => p.name);
    const names = items.map((p) => p.name);
    assert.ok(names.includes('candor_to_tribunal'), `${names}`);
    assert.deepEqual(names.filter((n) => n.startsWith('test_')), []);
    for (const p of items) assert.ok(p.description, `${p.name} has no description`);
    assert.ok(caseID, 'no matter from list_matters');
    const res = await client.getPrompt({ name: 'candor_to_tribunal', arguments: { case_id: caseID } });
    assert.ok(res.messages.length > 0);
    const text = res.messages.map((m) => m.content.text ?? '').join('\n');
    assert.match(text, /Rule 3\.3/);
    assert.match(text, /evidence, not instructions/);
  });

  test('completes a prompt argument with its matters', async () => {
    const res = await client.complete({
      ref: { type: 'ref/prompt', name: 'candor_to_tribunal' },
      argument: { name: 'case_id', value: caseID.slice(0, 3) },
    });
    assert.ok(res.completion.values.includes(caseID), `${res.completion.values}`);
  });

  test('pages every resource and template and reads a resource', async () => {
    const { items } = await pageAll((p) => client.listResources(p), 'resources', (r) => r.uri);
    const uris = items.map((r) => r.uri);
    assert.ok(uris.includes(`custody://matters/${caseID}`), `${uris}`);
    assert.deepEqual(uris.filter((u) => !u.startsWith('custody://')), []);
    const templates = await pageAll((p) => client.listResourceTemplates(p), 'resourceTemplates', (t) => t.uriTemplate);
    const tmpl = templates.items.map((t) => t.uriTemplate);
    assert.ok(tmpl.includes('custody://matters/{case_id}/documents/{document_id}'), `${tmpl}`);
    assert.deepEqual(tmpl.filter((u) => !u.startsWith('custody://')), []);

    const uri = `custody://matters/${caseID}`;
    const res = await client.readResource({ uri });
    assert.equal(res.contents.length, 1);
    assert.equal(res.contents[0].uri, uri);
    assert.equal(res.contents[0].mimeType, 'application/json');
    const body = JSON.parse(res.contents[0].text);
    assert.equal(body.matter?.case_id, caseID, res.contents[0].text.slice(0, 200));
  });

  test('does not reach a fixture', async () => {
    await assert.rejects(client.readResource({ uri: 'test://static-text' }), /-32002|not found/i);
    await assert.rejects(client.getPrompt({ name: 'test_simple_prompt' }), /-32602|Unknown prompt/);
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

  test('pages the fixture prompts, resources and templates, and sees nothing of Custody', async () => {
    const prompts = (await pageAll((p) => client.listPrompts(p), 'prompts', (p) => p.name)).items.map((p) => p.name);
    assert.deepEqual(prompts, ['test_input_required_result_prompt', 'test_prompt_with_arguments', 'test_prompt_with_embedded_resource', 'test_prompt_with_image', 'test_simple_prompt']);
    const resources = (await pageAll((p) => client.listResources(p), 'resources', (r) => r.uri)).items.map((r) => r.uri);
    assert.deepEqual(resources, ['test://static-binary', 'test://static-text', 'test://watched-resource']);
    const templates = (await pageAll((p) => client.listResourceTemplates(p), 'resourceTemplates', (t) => t.uriTemplate)).items;
    assert.deepEqual(templates.map((t) => t.uriTemplate), ['test://template/{id}/data']);

    const text = await client.readResource({ uri: 'test://static-text' });
    assert.equal(text.contents[0].text, 'This is the content of the static text resource.');
    const data = await client.readResource({ uri: 'test://template/123/data' });
    assert.deepEqual(JSON.parse(data.contents[0].text), { id: '123', templateTest: true, data: 'Data for ID: 123' });
    const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
    assert.equal(prompt.messages[0].content.text, "Prompt with arguments: arg1='a', arg2='b'");
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

// drain runs a task stream to its end and returns its messages by type.
async function drain(stream) {
  const seen = { taskCreated: [], taskStatus: [], result: [], error: [] };
  for await (const m of stream) seen[m.type].push(m);
  return seen;
}

describe('tasks (2025-11-25, the SDK\'s experimental tasks client)', () => {
  let client, transport, caseID;
  before(async () => {
    ({ client, transport } = await connect('custody-interop-tasks', { Authorization: `Bearer ${key}` }));
    await pageAll((p) => client.listTools(p), 'tools', (t) => t.name); // caches each tool's taskSupport
    const matters = await client.callTool({ name: 'list_matters', arguments: {} });
    caseID = matters.structuredContent.results[0].case_id;
  });
  after(async () => {
    await transport?.terminateSession();
    await client?.close();
  });

  test('declares the tasks capability and each tool\'s taskSupport', async () => {
    const caps = client.getServerCapabilities();
    assert.ok(caps.tasks?.requests?.tools?.call && caps.tasks.list && caps.tasks.cancel, JSON.stringify(caps.tasks));
    const { items } = await pageAll((p) => client.listTools(p), 'tools', (t) => t.name);
    const support = Object.fromEntries(items.map((t) => [t.name, t.execution?.taskSupport]));
    assert.equal(support.export_fact_record, 'optional');
    assert.equal(support.audit_citations, 'required');
    assert.equal(support.list_matters, undefined);
  });

  test('creates a task, polls tasks/get and reads tasks/result, then the exported resource', async () => {
    const seen = await drain(client.experimental.tasks.callToolStream(
      { name: 'export_fact_record', arguments: { case_id: caseID } }, CallToolResultSchema, { task: { ttl: 120000 } }));
    assert.deepEqual(seen.error, [], seen.error.map((e) => String(e.error)).join('; '));
    assert.equal(seen.taskCreated.length, 1);
    const created = seen.taskCreated[0].task;
    assert.equal(created.ttl, 120000);
    assert.ok(seen.taskStatus.length >= 1, 'tasks/get was never polled');
    assert.equal(seen.taskStatus.at(-1).task.status, 'completed');
    const res = seen.result[0].result;
    assert.equal(res._meta?.['io.modelcontextprotocol/related-task']?.taskId, created.taskId);
    const link = res.content.find((c) => c.type === 'resource_link');
    assert.ok(link, JSON.stringify(res.content).slice(0, 300));
    assert.equal(link.uri, res.structuredContent.uri);
    const read = await client.readResource({ uri: link.uri });
    const exported = JSON.parse(read.contents[0].text);
    assert.equal(exported.export_id, res.structuredContent.export_id);
    assert.equal(exported.facts.length, res.structuredContent.facts);

    const again = await client.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
    assert.deepEqual(again.structuredContent, res.structuredContent);
    const listed = await client.experimental.tasks.listTasks();
    assert.ok(listed.tasks.some((t) => t.taskId === created.taskId), 'tasks/list lacks the task');
  });

  test('runs a required-task tool as a task and gets every citation checked', async () => {
    // Without a task: refused (-32601, or by the SDK itself when its cache
    // of tool metadata, which keeps only the last tools/list page, knows).
    await assert.rejects(client.callTool({ name: 'audit_citations', arguments: { case_id: caseID } }), /task/);
    const seen = await drain(client.experimental.tasks.callToolStream(
      { name: 'audit_citations', arguments: { case_id: caseID } }, CallToolResultSchema, { task: { ttl: 60000 } }));
    assert.deepEqual(seen.error, [], seen.error.map((e) => String(e.error)).join('; '));
    const out = seen.result[0].result.structuredContent;
    assert.equal(out.checks_read_state, 'read');
    assert.equal(out.counts.match + out.counts.mismatch + out.counts.unreadable, out.checks.length);
    assert.ok(out.checks.length > 0);
  });

  test('a task id of nothing is -32602 for get, result and cancel', async () => {
    for (const call of [
      () => client.experimental.tasks.getTask('tk-none'),
      () => client.experimental.tasks.getTaskResult('tk-none', CallToolResultSchema),
      () => client.experimental.tasks.cancelTask('tk-none'),
    ]) {
      await assert.rejects(call(), (e) => e.code === -32602);
    }
  });
});

describe('a task cancelled by the fixture profile', () => {
  let client, transport;
  before(async () => {
    client = new Client({ name: 'custody-interop-cancel', version: '1.0.0' }, { capabilities: {} });
    transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    await pageAll((p) => client.listTools(p), 'tools', (t) => t.name);
  });
  after(async () => {
    await transport?.terminateSession();
    await client?.close();
  });

  test('creates a long task, cancels it, and sees it cancelled', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'test_slow_task', arguments: { seconds: 120 }, task: { ttl: 300000 } } },
      CreateTaskResultSchema);
    const id = created.task.taskId;
    assert.equal(created.task.status, 'working');
    const polled = await client.experimental.tasks.getTask(id);
    assert.equal(polled.taskId, id);
    const cancelled = await client.experimental.tasks.cancelTask(id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await client.experimental.tasks.getTask(id)).status, 'cancelled');
    await assert.rejects(client.experimental.tasks.cancelTask(id), (e) => e.code === -32602);
    await assert.rejects(client.experimental.tasks.getTaskResult(id, CallToolResultSchema), /cancelled/);
  });
});
