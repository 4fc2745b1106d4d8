// How the console's stories start the console and open it in Chromium: in local mode as an
// operator allowed everything (a person's own kubeconfig, as `kubectl simlock console` runs it), or
// in token mode as in the cluster, where each person logs in with their own token; and the
// screenshots of docs/CONSOLE.md, taken when SIMLOCK_SCREENSHOTS names a folder.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { startConsole, type ConsoleOptions, type RunningConsole } from '../../console/index.js';
import { silentLogger, type KubeClient } from '../../runtime/index.js';
import { launchBrowser, type TestBrowser } from '../../test/browser.js';
import type { ClusterTestContext } from '../../test/cluster/harness.js';
import { EVERYTHING, person } from './people.js';

const VIEWPORT = { width: 1280, height: 800 };

/**
 * What a file's console stories hold: its browser (`launch()`, alongside the fleet), the console
 * and the context of a page on it. Registered first, its afterAll runs last: all three are closed
 * after the file has stopped its fleet.
 */
class ConsoleStories {
  protected testBrowser: TestBrowser | undefined;
  protected running: RunningConsole | undefined;
  protected opened: BrowserContext | undefined;

  constructor() {
    afterAll(async () => {
      await this.opened?.close();
      await this.testBrowser?.close();
      await this.running?.stop();
    });
  }

  async launch(): Promise<void> {
    this.testBrowser = await launchBrowser();
  }

  get browser(): Browser {
    return started(this.testBrowser, 'the browser').browser;
  }

  get server(): RunningConsole {
    return started(this.running, 'the console');
  }
}

function started<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not started: see the file's beforeAll`);
  return value;
}

/** Local mode: `open(namespace)` starts the console on a fleet and opens a page on it. */
class LocalConsoleStories extends ConsoleStories {
  constructor(private readonly cluster: ClusterTestContext) {
    super();
  }

  /**
   * Starts the console on the fleet in `namespace` as an operator allowed everything (`options` as
   * startConsole takes them) and answers a page open on its Requests page.
   */
  async open(
    namespace: string,
    options: Pick<ConsoleOptions, 'attention' | 'proxyUrl'> = {},
  ): Promise<Page> {
    const someone = await person(this.cluster.admin, namespace, 'operator', {
      clusterRules: EVERYTHING,
    });
    this.running = await startConsole({
      client: someone.client,
      mode: 'local',
      log: silentLogger,
      simlockNamespace: namespace,
      namespace,
      ...options,
    });
    this.opened = await this.browser.newContext({ viewport: VIEWPORT });
    const page = await this.opened.newPage();
    await page.goto(this.running.openUrl);
    await page.getByRole('heading', { name: 'Requests' }).waitFor();
    return page;
  }

  /** The context of the page `open` answered, for more tabs of the same person. */
  get context(): BrowserContext {
    return started(this.opened, 'the page');
  }
}

/** Token mode, as in the cluster: its watches as the admin, each person by their token. */
class TokenConsoleStories extends ConsoleStories {
  constructor(private readonly cluster: ClusterTestContext) {
    super();
  }

  async start(simlockNamespace: string): Promise<void> {
    this.running = await startTokenConsole(this.cluster.admin, simlockNamespace);
  }

  /** A new page at `path`, logged in with `token`, once it is live. */
  logIn(token: string, path = ''): Promise<Page> {
    return logIn(this.browser, `${this.server.url}${path}`, token);
  }
}

/** For a file of console stories in local mode (call at the top of the file). */
export function localConsole(cluster: ClusterTestContext): LocalConsoleStories {
  return new LocalConsoleStories(cluster);
}

/** For a file of console stories in token mode (call at the top of the file). */
export function tokenConsole(cluster: ClusterTestContext): TokenConsoleStories {
  return new TokenConsoleStories(cluster);
}

/** The console in token mode: its watches as `client`, people by their tokens. */
export function startTokenConsole(
  client: KubeClient,
  simlockNamespace: string,
): Promise<RunningConsole> {
  return startConsole({ client, mode: 'token', log: silentLogger, simlockNamespace });
}

/** A page in a new context that opens `url`, logs in with `token` and waits until it is live. */
export async function logIn(browser: Browser, url: string, token: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
  await page.goto(url);
  await page.getByLabel('Bearer token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('header [role="status"]').filter({ hasText: '● Live' }).waitFor();
  return page;
}

/** Saves the whole page as console-`name`.png when SIMLOCK_SCREENSHOTS names a folder. */
export async function shoot(page: Page, name: string): Promise<void> {
  const shots = process.env.SIMLOCK_SCREENSHOTS;
  if (!shots) return;
  await mkdir(shots, { recursive: true });
  await page.screenshot({ path: join(shots, `console-${name}.png`), fullPage: true });
}
