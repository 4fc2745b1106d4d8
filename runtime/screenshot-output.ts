// The output of a screenshot exec, gathered the same way by the client and the console.
import { MAX_SCREENSHOT_BYTES, SimlockError } from '../api/index.js';

/**
 * Collects a screenshot exec's output (base64 chunks, as the proxy streams them with
 * `encoding: 'base64'`): the image from stdout, bounded by MAX_SCREENSHOT_BYTES, and the tail of
 * stderr for the error when the tool fails.
 */
export class ScreenshotOutput {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private stderr = '';

  readonly onOutput = (stream: 'stdout' | 'stderr', data: string): void => {
    const bytes = Buffer.from(data, 'base64');
    if (stream === 'stderr') {
      this.stderr = (this.stderr + bytes.toString('utf8')).slice(-2048);
      return;
    }
    this.size += bytes.length;
    if (this.size <= MAX_SCREENSHOT_BYTES) this.chunks.push(bytes);
  };

  /** The image, once the tool exited with `exitCode`; throws when it failed or was too large. */
  image(tool: string, exitCode: number): Buffer {
    if (this.size > MAX_SCREENSHOT_BYTES)
      throw new SimlockError(
        'INTERNAL',
        `the screenshot is larger than ${MAX_SCREENSHOT_BYTES} bytes`,
      );
    if (exitCode !== 0) {
      const why = this.stderr ? `: ${this.stderr.trim()}` : '';
      throw new SimlockError('INTERNAL', `${tool} exited with ${exitCode}${why}`);
    }
    return Buffer.concat(this.chunks);
  }
}
