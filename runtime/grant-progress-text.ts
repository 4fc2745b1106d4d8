// How people read a grant's progress (api/grant-progress.ts): the stage, the device being made or
// booted, the worker, and the agent's estimate for that host. One wording for the controller's
// Events, the plugin's lines, and the client's and the MCP server's progress. Pure.
import { PLATFORM_NAMES, type DeviceSpec, type GrantProgress } from '../api/index.js';

/**
 * The device a request asks for, as progress names it: its model, else its platform and class
 * ("an iOS phone"; a request naming neither class nor model means phone), unless the agent's
 * progress names the model it picked.
 */
export function askedDevice(
  spec: Pick<DeviceSpec, 'platform' | 'model' | 'class'>,
  progress?: Pick<GrantProgress, 'model'>,
): string {
  // The agent names the model it makes or boots; an older agent does not.
  if (progress?.model !== undefined && progress.model.length > 0) return progress.model;
  if (spec.model !== undefined && spec.model.length > 0) return spec.model;
  return `an ${PLATFORM_NAMES[spec.platform]} ${spec.class ?? 'phone'}`;
}

/** "about 40 s"; "about 3 min" from two minutes on; undefined when the agent gave none. */
export function estimateText(
  progress: Pick<GrantProgress, 'estimatedSeconds'>,
): string | undefined {
  const seconds = progress.estimatedSeconds;
  if (seconds === undefined) return undefined;
  return seconds < 120 ? `about ${seconds} s` : `about ${Math.round(seconds / 60)} min`;
}

/**
 * "provisioning iPhone 16 on worker-a": the stage, the device when given (a line that names it
 * already leaves it out), and the worker as people know it.
 */
export function stageText(
  progress: Pick<GrantProgress, 'stage'>,
  where: { device?: string | undefined; worker: string },
): string {
  const device = where.device !== undefined && where.device.length > 0 ? ` ${where.device}` : '';
  return `${progress.stage}${device} on ${where.worker}`;
}
