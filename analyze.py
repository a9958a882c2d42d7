import json, glob, os, sys
rows = {}
for f in sorted(glob.glob('out/detect/*/notes.json')):
    n = json.load(open(f))
    key = os.path.basename(os.path.dirname(f))
    print(f"== {key}: new={n['session_new']['ok']} newerr={(n['session_new'].get('error') or {}).get('message','')[:80]!r} exit={n['teardown']['exit_after_eof_ms']} files={ {k: len(v) for k, v in n['files_during_detection'].items()} } after={ {k: v[:6] for k, v in n['files_after_teardown'].items() if v} } upd={n['updates_during_detection'][:5]} areq={n['agent_requests']} left={n['leftovers_killed']}")
    for c in n['calls']:
        e = c.get('error') or {}
        msg = (e.get('message') or '') + ' ' + json.dumps(e.get('data'))[:150] if e else json.dumps(c.get('result'))[:150]
        print(f"   {c['method']:28s} {json.dumps(c['params'])[:60]:60s} {c['class']:8s} {c['ms']:8.1f}  {msg[:230]}")
