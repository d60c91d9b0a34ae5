// Skill export and import as .zip files, through yazl (writing) and yauzl (reading): the pair
// of small, maintained zip libraries by one author, made for each other. What stays ours is the
// policy: an entry whose name would leave the target folder (absolute, drive-relative, "..") is
// refused, and so are symbolic links, devices, encrypted entries, duplicates, a checksum that does
// not match, and archives that expand past a size limit. Nothing is written by this module.
import * as zlib from 'node:zlib';
import * as yauzl from 'yauzl';
import * as yazl from 'yazl';

export interface ZipEntry {
  /** Forward-slash relative path. */
  name: string;
  data: Buffer;
}

export class ZipError extends Error {}

/** A relative, forward-slash path with no "..", no absolute or drive prefix. */
export function safeEntryName(name: string): string | undefined {
  const n = name.replace(/\\/g, '/');
  if (n.startsWith('/') || /^[A-Za-z]:/.test(n)) return undefined;
  const parts = n.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.some((p) => p === '..')) return undefined;
  return parts.join('/');
}

/** writeZip is a zip of entries: regular files (rw-r--r--), deflated, UTF-8 names. */
export function writeZip(entries: ZipEntry[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    const name = safeEntryName(e.name);
    if (!name) throw new ZipError(`${e.name}: unsafe path for a zip entry`);
    zip.addBuffer(e.data, name, { mode: 0o100644 });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

// yauzl's own name checks (validateFileName) end the read with one of these messages.
const UNSAFE_NAME = /^(absolute path|invalid relative path|invalid characters in fileName): (.*)$/;

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/**
 * readZip reads every file entry of a zip held in memory. Folder entries are skipped (a file's
 * name implies its folders). Throws a ZipError naming the entry for anything it refuses.
 */
export async function readZip(buf: Buffer, maxTotal = 50 * 1024 * 1024): Promise<ZipEntry[]> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(buf, { validateEntrySizes: true, strictFileNames: false });
  } catch (e) {
    throw new ZipError(`not a zip file (${message(e)})`);
  }
  const out: ZipEntry[] = [];
  const seen = new Set<string>();
  let total = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const raw = entry.fileName;
      const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
      if (raw.endsWith('/') || type === S_IFDIR) continue;
      // Unix-made zips record the file type; a zip from Windows leaves it 0 (a plain file).
      if (type === S_IFLNK) throw new ZipError(`${raw}: symbolic links are not imported`);
      if (type !== 0 && type !== S_IFREG) throw new ZipError(`${raw}: not a regular file (mode ${type.toString(8)})`);
      const name = safeEntryName(raw);
      if (!name) throw new ZipError(`${raw}: unsafe path in the zip`);
      if (seen.has(name)) throw new ZipError(`${raw}: the zip holds this file twice`);
      seen.add(name);
      if (entry.isEncrypted()) throw new ZipError(`${raw}: encrypted entries are not supported`);
      if (!entry.canDecodeFileData()) throw new ZipError(`${raw}: compression method ${entry.compressionMethod} is not supported`);
      total += entry.uncompressedSize;
      if (total > maxTotal) throw new ZipError(`the zip expands to more than ${maxTotal} bytes`);
      const data = await readAll(await zip.openReadStreamPromise(entry));
      if (zlib.crc32(data) !== entry.crc32) throw new ZipError(`${raw}: checksum mismatch`);
      out.push({ name, data });
    }
  } catch (e) {
    if (e instanceof ZipError) throw e;
    const m = UNSAFE_NAME.exec(message(e));
    if (m) throw new ZipError(`${m[2]}: unsafe path in the zip`);
    throw new ZipError(`the zip is unreadable: ${message(e)}`);
  } finally {
    zip.close();
  }
  return out;
}

function readAll(s: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
