import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
const transport = new StdioClientTransport({ command: 'kubectl', args: ['simlock', 'mcp'], env, stderr: 'inherit' });
const client = new Client({ name: 'transcript', version: '1.0.0' });
await client.connect(transport);
console.log('tools:', (await client.listTools()).tools.map((t) => t.name).join(', '));
async function call(name: string, args: Record<string, unknown>) {
  console.log(`\n> ${name} ${JSON.stringify(args)}`);
  const result = (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 120_000,
    resetTimeoutOnProgress: true,
    onprogress: (p) => console.log(`  progress ${p.progress}: ${p.message}`),
  })) as CallToolResult;
  for (const part of result.content) console.log(part.type === 'text' ? part.text : `<${part.type}>`);
  if (result.isError) console.log(`(isError, structuredContent ${JSON.stringify(result.structuredContent ?? null)})`);
  return result;
}
const phone = await call('lease', { platform: 'ios', physical: true });
await call('list_devices', { worker: 'worker-b' });
await call('exec', { tool: 'devicectl', args: ['device', 'info', 'apps'] });
await call('lease', { platform: 'ios', physical: true, waitTimeoutSeconds: 5 });
await call('lease', { platform: 'ios', model: 'iPhone 16' });
await call('list_leases', {});
await call('exec', { lease: phone.structuredContent?.lease, tool: 'adb', args: ['devices'] });
await call('lease', { platform: 'windows' });
await call('release', { lease: phone.structuredContent?.lease });
await client.close();
