// Per test file: whatever tempDir() made is removed when the file's tests end, also when they fail.
import { afterAll } from 'vitest';
import { removeTempDirs } from '../helpers/temp-dir.js';

afterAll(removeTempDirs);
