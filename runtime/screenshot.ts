// A screenshot of a leased device, taken through the exec proxy: the one flow behind the typed
// client's `screenshot()` (and so the plugin and its MCP server) and the console's. Each caller
// reads the lease's request itself (the holder's view of the grant: its phase and device; ADR
// 0034), with its own credentials and its own wording of a failed read, and says how it reaches
// the proxy; what follows is the same for both.
import { SimlockError, screenshotCommand, type LeaseRequestObject } from '../api/index.js';
import { execThroughProxy } from './exec-client.js';
import { ScreenshotOutput } from './screenshot-output.js';

/** Where the exec proxy is and the bearer token it is called with. */
export interface ProxyTarget {
  url: string;
  token: string;
}

export interface ScreenshotThroughProxy {
  namespace: string;
  /** The lease's name (its request's). */
  name: string;
  /** The lease's request, as the caller read it. */
  request: Pick<LeaseRequestObject, 'status'>;
  /** Asked only once the lease is granted a device that can give a screenshot. */
  proxy: () => Promise<ProxyTarget> | ProxyTarget;
}

/** The PNG of the leased device's screen, through the exec proxy and the device's agent. */
export async function screenshotThroughProxy(options: ScreenshotThroughProxy): Promise<Buffer> {
  const { namespace, name, request } = options;
  const device = request.status?.device;
  if (request.status?.phase !== 'Granted' || !device) {
    throw new SimlockError('LEASE_NOT_ACTIVE', `lease ${namespace}/${name} is not granted`);
  }
  const command = screenshotCommand(device);
  if (!command) {
    throw new SimlockError(
      'TOOL_NOT_ALLOWED',
      `no screenshot for ${device.name}: devicectl cannot take one of a physical iPhone or iPad`,
    );
  }
  const { url, token } = await options.proxy();
  const output = new ScreenshotOutput();
  const { exitCode } = await execThroughProxy({
    url,
    token,
    namespace,
    lease: name,
    tool: command.tool,
    args: command.args,
    timeoutSeconds: 30,
    encoding: 'base64',
    onOutput: output.onOutput,
  });
  return output.image(command.tool, exitCode);
}
