import { describe, expect, it } from 'vitest';
import { appendonlyOutcome, replicasOf, replicationOutcome, roleOutcome, type TopologyFacts } from '../../../src/doctor/checks/redis-topology.js';

const REPLICATION = '# Replication\r\nrole:master\r\nconnected_slaves:1\r\nslave0:ip=10.0.0.2,port=6379,state=online,offset=42,lag=1\r\nmaster_repl_offset:42\r\n';

function facts(change: Partial<TopologyFacts> = {}): TopologyFacts {
  return { role: 'master', address: '10.0.0.1:6379', replicas: replicasOf(REPLICATION), appendonly: true, minReplicas: { toWrite: 1, maxLagS: 10 }, ...change };
}

describe('the topology checks of the doctor', () => {
  it('reads the replicas INFO replication lists', () => {
    expect(replicasOf(REPLICATION)).toEqual([{ address: '10.0.0.2:6379', state: 'online', lagS: 1 }]);
    expect(replicasOf('role:master\r\nconnected_slaves:0\r\n')).toEqual([]);
  });

  it('redis.role: the primary and its replicas; with Sentinels, a primary with none to promote is a warn', () => {
    expect(roleOutcome(facts(), false)).toMatchObject({ status: 'ok', summary: 'primary 10.0.0.1:6379 with 1 replica (10.0.0.2:6379 online, lag 1 s)' });
    expect(roleOutcome(facts({ replicas: [] }), false)).toMatchObject({ status: 'ok', summary: 'primary 10.0.0.1:6379, a single server: no replica to fail over to' });
    expect(roleOutcome(facts({ replicas: [] }), true)).toMatchObject({ status: 'warn', fix: 'start a replica of it (replicaof <primary host> <port>)' });
    expect(roleOutcome(facts({ replicas: [{ address: 'r:1', state: 'wait_bgsave', lagS: 0 }] }), false).status).toBe('warn');
  });

  it('redis.appendonly: a warn with the setting when Redis would lose what it acknowledged at a restart', () => {
    expect(appendonlyOutcome(facts()).status).toBe('ok');
    expect(appendonlyOutcome(facts({ appendonly: false }))).toMatchObject({ status: 'warn', fix: expect.stringContaining('set appendonly yes in redis.conf') });
  });

  it('redis.replication: what min-replicas-to-write and min-replicas-max-lag let a failover take back', () => {
    expect(replicationOutcome(facts())).toMatchObject({ status: 'ok' });
    const advised = 'set min-replicas-to-write 1 and min-replicas-max-lag 10 (or less) in redis.conf (CONFIG SET applies them now)';
    expect(replicationOutcome(facts({ minReplicas: { toWrite: 0, maxLagS: 10 } }))).toMatchObject({ status: 'warn', fix: advised });
    expect(replicationOutcome(facts({ minReplicas: { toWrite: 1, maxLagS: 60 } }))).toMatchObject({ status: 'warn', summary: 'min-replicas-max-lag 60 s: a failover can take back up to 60 s of writes' });
    // Asked for a replica that is not there: Redis takes no write at all.
    expect(replicationOutcome(facts({ replicas: [] }))).toMatchObject({ status: 'fail', summary: 'min-replicas-to-write 1, but 0 replicas in sync: Redis refuses every write (NOREPLICAS)' });
    expect(replicationOutcome(facts({ replicas: [], minReplicas: { toWrite: 0, maxLagS: 10 } })).status).toBe('skip');
    expect(replicationOutcome(facts({ minReplicas: undefined, configRefused: "ERR unknown command 'CONFIG'" }))).toMatchObject({ status: 'skip', summary: expect.stringContaining('CONFIG GET refused') });
  });
});
