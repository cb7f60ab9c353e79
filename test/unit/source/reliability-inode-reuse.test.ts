// Inodes get reused, and a file can be rewritten in place: dev:ino alone does not say "same file". The
// follower also compares the file's first bytes (up to 1 KiB). The kernel cannot be made to reuse an
// inode on demand, so the same dev:ino with other content is produced the way it happens in place:
// truncate and rewrite within one poll; and the identity rules are unit-tested directly.
import { closeSync, ftruncateSync, openSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FINGERPRINT_BYTES, KnownFiles, identity, looksBinary, sameStart } from '../../../src/source/file-identity.js';
import { followerFixture } from '../../helpers/follower-fixture.js';
import { SeqWriter, fdsInto, seqBlock } from '../../helpers/sequence-log.js';

describe('file identity rules', () => {
  const b = (s: string) => Buffer.from(s);

  it('two starts agree when the shorter is a prefix of the longer (a file grows into its fingerprint)', () => {
    expect(sameStart(b('{"seq":1}\n{"se'), b('{"seq":1}\n'))).toBe(true);
    expect(sameStart(b('{"seq":1}\n'), b('{"seq":1}\n{"seq":2}\n'))).toBe(true);
    expect(sameStart(b(''), b('anything'))).toBe(true);
    expect(sameStart(b('{"seq":2}\n'), b('{"seq":1}\n'))).toBe(false);
  });

  it('the same dev:ino with another fingerprint is a new file: the remembered offset is dropped', () => {
    const known = new KnownFiles();
    known.remember('8:42', b('{"seq":1}\n{"seq":2}\n'), 20);
    expect(known.offsetOf('8:42', b('{"seq":1}\n{"seq":2}\n{"seq":3}\n'), 30)).toBe(20); // same file, grown
    expect(known.offsetOf('8:42', b('{"seq":900}\n'), 500)).toBeUndefined(); // reused inode
    expect(known.offsetOf('8:42', b('{"seq":1}\n{"seq":2}\n'), 20)).toBeUndefined(); // and forgotten
  });

  it('a remembered file now shorter than what was read was truncated: read it as new', () => {
    const known = new KnownFiles();
    known.remember('8:7', b('{"seq":1}\n'), 100);
    expect(known.offsetOf('8:7', b('{"seq":1}\n'), 50)).toBeUndefined();
  });

  it('an unknown identity is not remembered, and memory is bounded', () => {
    const known = new KnownFiles(3);
    for (let i = 0; i < 10; i++) known.remember(`1:${i}`, b(`{"seq":${i}}\n`), i);
    expect(known.size).toBe(3);
    expect(known.offsetOf('1:0', b('{"seq":0}\n'), 100)).toBeUndefined();
    expect(known.offsetOf('1:9', b('{"seq":9}\n'), 100)).toBe(9);
    expect(known.offsetOf('2:9', b('{"seq":9}\n'), 100)).toBeUndefined();
  });

  it('identity is dev:ino; compressed or binary content is recognised', () => {
    expect(identity({ dev: 2049, ino: 77 })).toBe('2049:77');
    expect(looksBinary(Buffer.from([0x1f, 0x8b, 8, 0]))).toBe(true);
    expect(looksBinary(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1]))).toBe(true);
    expect(looksBinary(b('BZh91AY'))).toBe(true);
    expect(looksBinary(b('{"seq":1}\u0000'))).toBe(true);
    expect(looksBinary(b('{"seq":1,"model":"日本"}\n'))).toBe(false);
    expect(FINGERPRINT_BYTES).toBe(1024);
  });
});

describe('same inode, other content', () => {
  const fx = followerFixture({ prefix: 'zpe-inode-', writer: false, checkFds: true });

  it.each([
    ['longer than the old content (its size alone would not tell)', 300],
    ['as long as the old content, give or take a line', 39],
    ['shorter than the old content', 12],
  ])('truncated and rewritten with another first line within one poll, %s: read from 0', async (_name, lines) => {
    const { path, sink } = fx;
    writeFileSync(path, seqBlock(1, 40));
    const follower = await fx.follow();
    const ino = statSync(path).ino;
    const fd = openSync(path, 'r+');
    ftruncateSync(fd, 0);
    writeSync(fd, seqBlock(41, 40 + lines), 0);
    closeSync(fd);
    expect(statSync(path).ino).toBe(ino);
    await follower.pollOnce();
    sink.expectExactlyOnce(40 + lines);
    expect(sink.rotations.map((r) => r.kind)).toEqual(['truncate']);
  });

  it('rewritten in place with the same first line: only the size can tell (documented limit)', async () => {
    const { path, sink } = fx;
    writeFileSync(path, seqBlock(1, 40));
    const follower = await fx.follow();
    // Same first KiB, shorter: caught by the size having gone down.
    writeFileSync(path, seqBlock(1, 35));
    await follower.pollOnce();
    expect(sink.rotations.map((r) => r.kind)).toEqual(['truncate']);
    expect(sink.counts.get(1)).toBe(2); // re-read from the start, as the file was replaced
  });

  it('a file let go of (its path replaced), then back in view with the same fingerprint: resumed, not read again', async () => {
    const { dir, path, sink } = fx;
    const away = join(dir, 'app.log.old');
    const w = new SeqWriter(path);
    const follower = await fx.follow({ patterns: [join(dir, '*.log')] });
    w.write(20);
    await follower.pollOnce();
    renameSync(path, away); // out of the glob
    writeFileSync(path, seqBlock(21, 25)); // a new file at the path: the old one is drained and let go of
    await follower.pollOnce();
    expect(fdsInto(dir)).toHaveLength(2); // the writer's and the new file's
    w.next = 26;
    w.write(5); // written to the old file while nobody follows it
    unlinkSync(path);
    renameSync(away, path); // back in view, same dev:ino, same first bytes
    await follower.pollOnce();
    w.write(5);
    await follower.pollOnce();
    w.close();
    sink.expectExactlyOnce(35);
  });

  it('a file let go of, rewritten with other content on the same inode, then back in view: read from 0', async () => {
    const { dir, path, sink } = fx;
    const away = join(dir, 'app.log.old');
    const w = new SeqWriter(path);
    const follower = await fx.follow({ patterns: [join(dir, '*.log')] });
    w.write(20);
    await follower.pollOnce();
    renameSync(path, away);
    writeFileSync(path, seqBlock(21, 30)); // the path names a new file: the old one is let go of
    await follower.pollOnce();
    await follower.pollOnce();
    expect(fdsInto(dir)).toHaveLength(2); // the writer's and the new file's
    const fd = openSync(away, 'r+');
    ftruncateSync(fd, 0);
    writeSync(fd, seqBlock(31, 60), 0); // same dev:ino as the file read up to byte N, other content
    closeSync(fd);
    w.close();
    unlinkSync(path);
    renameSync(away, path);
    await follower.pollOnce();
    sink.expectExactlyOnce(60);
  });

  it('delete and recreate, which often reuses the inode number: the new file is read from its start', async () => {
    const { path, sink } = fx;
    writeFileSync(path, seqBlock(1, 30));
    const follower = await fx.follow();
    unlinkSync(path);
    await follower.pollOnce(); // the follower lets go of the deleted file (after two idle polls)
    await follower.pollOnce();
    writeFileSync(path, seqBlock(31, 200)); // larger than the old offset, maybe on the same inode
    await follower.pollOnce();
    sink.expectExactlyOnce(200);
  });
});
