// postject ships no types: the one function the release uses (its README's API).
declare module 'postject' {
  export function inject(
    file: string,
    resource: string,
    data: Buffer,
    options: { sentinelFuse: string; machoSegmentName?: string; overwrite?: boolean },
  ): Promise<void>;
}
