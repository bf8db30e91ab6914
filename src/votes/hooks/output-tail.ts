/**
 * The last `maxBytes` of a stream's output. A hook command may print without end; only its tail
 * explains a failure, so memory stays bounded whatever it prints.
 */
export class OutputTail {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  /** True once something was dropped from the front. */
  truncated = false;

  constructor(private readonly maxBytes: number) {}

  /** Bytes kept. */
  get size(): number {
    return this.bytes;
  }

  push(chunk: Buffer): void {
    if (chunk.length >= this.maxBytes) {
      // One chunk fills the whole tail: keep its end only (a copy, so the big buffer can go).
      this.chunks.length = 0;
      this.chunks.push(Buffer.from(chunk.subarray(chunk.length - this.maxBytes)));
      this.truncated = this.truncated || chunk.length > this.maxBytes || this.bytes > 0;
      this.bytes = this.maxBytes;
      return;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.maxBytes) {
      const first = this.chunks[0]!;
      const excess = this.bytes - this.maxBytes;
      this.truncated = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.bytes -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.bytes -= excess;
      }
    }
  }

  /** Everything kept, as UTF-8. */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  /**
   * The last `lines` non-empty lines on one line (joined with ` | `), at most `maxChars` characters
   * (the end is kept: the last words are usually the error). A line cut by the truncation is left
   * out rather than shown half, unless it is the only one. `scrub` rewrites the lines before they
   * are cut (so a secret it removes never shows in part). Default: as they are.
   */
  lastLines(lines: number, maxChars: number, scrub: (text: string) => string = (text) => text): string {
    let all = this.text().split(/\r?\n/);
    if (this.truncated && all.length > 1) all = all.slice(1);
    const kept = all.map((line) => line.trim()).filter((line) => line !== '').slice(-lines);
    const joined = scrub(kept.join(' | '));
    return joined.length > maxChars ? `…${joined.slice(joined.length - maxChars + 1)}` : joined;
  }
}
