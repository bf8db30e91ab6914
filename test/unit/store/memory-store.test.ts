import { createMemoryStore } from '../../../src/store/memory.js';
import { describeStoreContract } from './store-contract.js';

describeStoreContract('memory store', async () => ({ store: createMemoryStore() }));
