// The image of the Dockerfile, built as docs/INSTALL.md says: each of its three processes starts
// (`--help`) as uid 1000 on a read-only root filesystem, with no capabilities, as the chart's pods
// run it (an emptyDir at /tmp).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { IMAGE, KindRun, must } from './kind.js';

const tools = inject('kindTools');

// Where the kind tools cannot be had, the file is skipped, the reason in its name (and on the last
// line of `npm test`): never a green test that tested nothing.
describe.runIf(tools.ready)(
  tools.ready ? 'the simlock image' : `the simlock image (skipped: ${tools.missing})`,
  () => {
    let kind: KindRun;
    const run = (args: string[]) =>
      kind.run('docker', [
        'run',
        '--rm',
        '--read-only',
        '--tmpfs',
        '/tmp',
        '--cap-drop',
        'ALL',
        '--security-opt',
        'no-new-privileges',
        '--network',
        'none',
        ...args,
      ]);

    beforeAll(async () => {
      if (!tools.ready) return;
      kind = await KindRun.start(tools, 'kind-image.log');
      await kind.buildImage();
    }, 900_000);
    afterAll(() => kind?.cleanup());

    it('runs as uid 1000', async () => {
      const user = must(
        await kind.run('docker', ['image', 'inspect', IMAGE, '-f', '{{.Config.User}}']),
        'docker image inspect',
      );
      expect(user.trim()).toBe('1000:1000');
      const uid = must(await run(['--entrypoint', 'id', IMAGE, '-u']), 'id -u');
      expect(uid.trim()).toBe('1000');
    });

    it.concurrent.each([['controller'], ['proxy'], ['agent']])(
      'starts %s --help',
      async (component) => {
        const result = await run([IMAGE, component, '--help']);
        expect(result.stderr).not.toMatch(/Error|EROFS|EACCES/);
        expect(result.exitCode).toBe(0);
        expect(result.stdout).toMatch(/--help/);
      },
    );

    it('says how to use it when the component is missing', async () => {
      const result = await run([IMAGE, 'nonsense']);
      expect(result.exitCode).toBe(64);
      expect(result.stderr).toContain('usage: simlock controller|proxy|agent');
    });
  },
);
