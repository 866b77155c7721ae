import re,sys,glob,os
rules=[re.match(r'^- ([A-Z]+-\d+) ',l).group(1) for l in open('/work/shared/RULES.md') if re.match(r'^- [A-Z]+-\d+ ',l)]
order={r:i for i,r in enumerate(rules)}
default_reason={
 'INV':'an invariant: checked through the rules it decomposes into; no direct test yet',
 'MEM':'membership issue (6)','PUB':'source inventory issue (3)','SES':'InventorySession issue (5)',
 'DELTA':'InventorySession issue (5)','SNAP':'InventorySession issue (5)',
 'IDX':'GlobalIndex / Manager issues (4, 7)','API':'Manager issue (7): /cache/sync and /cache/metadata/await','BND':'InventorySession / Manager issues (5, 7)',
 'ROUTE':'recovery route selection has no issue yet (DESIGN §8 is an outline)','DIAG':'Manager issue (7)',
 'OPS':'Manager issue (7)','PERF':'performance harnesses of issues 5 and 7 and later qualification'}
abbrev={}
TESTY=re.compile(r'^[A-Za-z0-9_]+(Test|Tests|Properties|Benchmark|Harness)([#.][A-Za-z0-9_]+)?$|/|\.table$')
def clean(cell):
    for k,v in abbrev.items(): cell=re.sub(r'(?<![A-Za-z`])'+re.escape(k)+r'(?![A-Za-z0-9])', '`'+v+'`', cell)
    def bq(m):
        t=m.group(1)
        return m.group(0) if TESTY.search(t) else t
    return re.sub(r'`([^`]+)`',bq,cell)
def ids(cell):
    out=[]
    for part in re.split(r',\s*',cell):
        m=re.match(r'^([A-Z]+-\d+)\s*(?:…|\.\.\.)\s*([A-Z]+-\d+)$',part.strip())
        if m:
            a,b=order[m.group(1)],order[m.group(2)]; out+=rules[a:b+1]
        elif re.match(r'^[A-Z]+-\d+$',part.strip()): out.append(part.strip())
    return out
tested={}; notyet={}; partly=set()
for f in sorted(glob.glob('/work/main/docs/parts/*-conformance.md')):
    text=open(f).read()
    abbrev.clear()
    if 'inventory-conformance' in f:
        abbrev.update({'T-int':'SourceIntervalTableTest','T-snap':'SnapshotScanTableTest','P-int':'SourceModelProperties','P-snap':'SourceModelProperties'})
    section='tested'
    for l in text.splitlines():
        if l.startswith('#'):
            section='notyet' if re.search(r'not yet',l,re.I) else 'tested'; continue
        m=re.match(r'^\|\s*([A-Z][^|]*?)\s*\|(.*)\|\s*$',l)
        if not m: continue
        rs=ids(m.group(1))
        if not rs: continue
        cells=[c.strip() for c in m.group(2).split('|')]
        status=None
        if cells and cells[0] in ('tested','partly','not yet'):
            status=cells[0]; cells=cells[1:]
        body=clean(' '.join(cells))
        for r in rs:
            if section=='notyet' or status=='not yet': notyet.setdefault(r,[]).append(body)
            else:
                tested.setdefault(r,[]).append(body)
                if status=='partly': partly.add(r)
out=['# Conformance ledger','',
'Every rule ID of `RULES.md` (in `../shared/`) with the tests that check it, or "not yet" and why. Test names',
'are in backquotes (a test class, `Class#method` / `Class.method`, or a table file); `ConformanceLedgerTest` fails',
'if a named test does not exist, if a rule cited by any test is marked "not yet", or if this list differs from',
'RULES.md. Status: **tested** (checked as stated), **partly** (the row says which clauses are not yet checked),',
'**not yet**. Table files live under `conformance/src/test/resources/tables/`.','',
'<!-- conformance-ledger:begin -->','| rule | status | tests / reason |','|---|---|---|']
for r in rules:
    if r in tested:
        st='partly' if (r in partly or r in notyet) else 'tested'
        body='; '.join(tested[r])
        if r in notyet: body+=' — not yet: '+'; '.join(notyet[r])
        out.append(f'| {r} | {st} | {body} |')
    elif r in notyet:
        out.append(f'| {r} | not yet | {"; ".join(notyet[r])} |')
    else:
        out.append(f'| {r} | not yet | {default_reason[r.split("-")[0]]} |')
out.append('<!-- conformance-ledger:end -->')
open('/work/main/docs/conformance.md','w').write('\n'.join(out)+'\n')
print(len(rules),'rules;',len(tested),'tested/partly;',len(notyet),'with not-yet notes')
