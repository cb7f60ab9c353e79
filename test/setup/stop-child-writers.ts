// Per test file: a child writer a failed test never stopped is killed when the file's tests end.
import { afterAll } from 'vitest';
import { killChildWriters } from '../helpers/sequence-log.js';

afterAll(killChildWriters);
