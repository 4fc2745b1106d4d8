// A real Chromium for the console's tests and benchmark, driven by playwright-core. One browser per
// test file (tests share it, each with a fresh context); tools/ensure-chromium.sh installs Debian's
// chromium when it is missing and fails loudly where it cannot.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';

const ensureScript = fileURLToPath(new URL('../tools/ensure-chromium.sh', import.meta.url));

export async function chromiumPath(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(ensureScript, { timeout: 600_000 });
    return stdout.trim();
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    throw new Error(`no Chromium for the browser tests:\n${stderr}`);
  }
}

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/** Launches headless Chromium with flags that keep it off the (closed) network. */
export async function launchBrowser(): Promise<TestBrowser> {
  const executablePath = await chromiumPath();
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close();
    },
  };
}
