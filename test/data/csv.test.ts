import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseCsvDataset, readCsvDataset } from '../../src/data/csv.js';
import { tempDir, write } from './_files.js';

const opts = { inputShape: [1, 3, 1] as const, numClasses: 3 };

describe('parseCsvDataset', () => {
  it('reads the feature columns in header order around the label column', () => {
    const ds = parseCsvDataset('a,label,b,c\n0.5,2,-1,1e-3\n3,0,.25,+4\n', 'silo.csv', opts);
    expect(ds.n).toBe(2);
    expect(ds.shape).toEqual([1, 3, 1]);
    expect(Array.from(ds.x)).toEqual([0.5, -1, Math.fround(1e-3), 3, 0.25, 4]);
    expect(Array.from(ds.y)).toEqual([2, 0]);
    expect(ds.name).toBe('silo');
    expect(ds.source).toBe('csv:silo.csv');
  });

  it('handles a byte-order mark, CRLF, quotes, blank lines, spaces, gzip, a delimiter and a label column name', () => {
    const text = '\uFEFFx1;x2;x3;"class"\r\n"1.5"; 2 ;3;1\r\n\r\n4;5;6;2\r\n';
    const bytes = gzipSync(new TextEncoder().encode(text));
    const ds = parseCsvDataset(bytes, 'silo.csv.gz', { ...opts, delimiter: ';', labelColumn: 'class' });
    expect(Array.from(ds.x)).toEqual([1.5, 2, 3, 4, 5, 6]);
    expect(Array.from(ds.y)).toEqual([1, 2]);
  });

  it('maps class names to labels when the consortium lists them', () => {
    const ds = parseCsvDataset('f1,f2,f3,label\n1,2,3,virginica\n1,2,3,0\n', 'iris.csv', {
      ...opts,
      classNames: ['setosa', 'versicolor', 'virginica'],
    });
    expect(Array.from(ds.y)).toEqual([2, 0]);
  });

  it('names the file, the line and the column of a bad cell', () => {
    const bad = (text: string, message: string, more = {}) =>
      expect(() => parseCsvDataset(text, 'silo.csv', { ...opts, ...more })).toThrow(message);
    bad('a,b,c,label\n1,2,3,0\n1,abc,3,0\n', "silo.csv: line 3, column 'b': 'abc' is not a number");
    bad('a,b,c,label\n1,2,,0\n', "silo.csv: line 2, column 'c': empty cell");
    bad('a,b,c,label\n1,2,0x10,0\n', "silo.csv: line 2, column 'c': '0x10' is not a number");
    bad('a,b,c,label\n1,2,1e99,0\n', "silo.csv: line 2, column 'c': '1e99' is not a number");
    bad(
      'a,b,c,label\n1,2,3,3\n',
      "silo.csv: line 2, column 'label': '3' is not a class label (an integer in [0, 3))",
    );
    bad('a,b,c,label\n1,2,3,1.5\n', "silo.csv: line 2, column 'label': '1.5' is not a class label");
    bad('a,b,c,label\n1,2,3,cat\n', "'cat' is not a class label (an integer in [0, 3) or a class name)", {
      classNames: ['x', 'y', 'z'],
    });
    bad('a,b,c,label\n1,2,3\n', 'silo.csv: malformed CSV (Invalid Record Length: expect 4, got 3 on line 2)');
    bad('a,b,c,y\n1,2,3,0\n', "silo.csv: no label column 'label' in the header (columns: a, b, c, y)");
    bad('a,b,label\n1,2,0\n', "silo.csv: 2 feature columns besides 'label', the input shape 1×3×1 needs 3");
    bad('a,a,c,label\n1,2,3,0\n', "silo.csv: column 'a' appears twice in the header");
    bad('a,b,c,label\n', 'silo.csv: holds no examples (only a header row)');
    bad('', 'silo.csv: empty file');
    expect(() => parseCsvDataset(gzipSync(Buffer.from('a,b')).subarray(0, 10), 'z.csv.gz', opts)).toThrow(
      'z.csv.gz: corrupt or truncated gzip data',
    );
  });

  it('reads a file and names it when it is missing', () => {
    const path = write(tempDir(), 'tab.csv', new TextEncoder().encode('a,b,c,label\n1,2,3,1\n'));
    expect(readCsvDataset(path, opts).n).toBe(1);
    expect(() => readCsvDataset('/nonexistent/t.csv', opts)).toThrow(
      '/nonexistent/t.csv: cannot read CSV file (ENOENT)',
    );
  });
});
