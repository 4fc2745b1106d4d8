import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { emulatorPort, isOwnPort, loopbackPortFree } from './adb-servers.js';

describe('console ports', () => {
  it('reads an emulator serial’s console port; the agent’s are 5600–5682', () => {
    expect(emulatorPort('emulator-5600')).toBe(5600);
    expect(emulatorPort('0A281FDD4003QK')).toBeUndefined();
    expect([5554, 5584, 5600, 5682, 5684].map(isOwnPort)).toEqual([
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it('tells a loopback port something listens on from a free one', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    expect(await loopbackPortFree(port)).toBe(false);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await loopbackPortFree(port)).toBe(true);
  });
});
