// Test helper: the shapes of the stand-in Android tools' state (android-tools.ts) and call log.
// Types only: android-tools.ts runs under Node's type stripping, which erases `import type`.

export interface Profile {
  id: string;
  name: string;
  oem: string;
  tag?: string;
}

export interface AvdRecord {
  image: string;
  profile: string;
  boots: number;
  wipes: number;
}

export interface ServerRecord {
  running: boolean;
  starts: number;
  kills: number;
  /** What the server was started with: scanning emulator ports, USB, mDNS. */
  scansEmulators: boolean;
  usb: boolean;
  mdns: boolean;
  /** Console ports of the emulators registered with it. */
  emulators: number[];
}

export interface EmulatorRecord {
  avd: string;
  home: string;
  serverPort: number;
  bootCompletedAt: number;
}

export interface PhoneRecord {
  serial: string;
  state: 'device' | 'unauthorized' | 'offline';
  model: string;
  sdk: string;
  packages: string[];
}

export interface AndroidState {
  profiles: Profile[];
  /** Package paths: system-images;android-34;google_apis;x86_64. */
  images: string[];
  /** AVD home path → AVD name → record; files are written in the home like avdmanager's. */
  homes: Record<string, Record<string, AvdRecord>>;
  servers: Record<string, ServerRecord>;
  emulators: Record<string, EmulatorRecord>;
  phones: PhoneRecord[];
  control: {
    failNextCreate?: 'disk-full';
    bootDelayMs?: number;
    /** AVDs whose emulator never finishes booting (sys.boot_completed stays empty). */
    neverBoots?: string[];
  };
}

export interface CallRecord {
  tool: string;
  argv: string[];
  avdHome: string;
  /** The adb server the call was aimed at (-P, else ANDROID_ADB_SERVER_PORT, else 5037). */
  serverPort: number;
  env: Record<string, string | undefined>;
}
