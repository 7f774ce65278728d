# Static loop statistics of k_coop<8, 6, true(, CUTS)> from `nvdisasm -c -hex` output (docs/gpu-hines.md,
# "Session 5, run 6"). Usage: python3 gpu_hines_s5_run6_sass_loops.py FILE.sass SUFFIX, SUFFIX
# "E" for the kernel without the switch, "Li<c>E" for SE_COOP_CUTS=c of the switch patch.
import re,sys
# per kernel (cuts c): static stall cycles and wait-barrier counts of the hot loops
txt=open(sys.argv[1]).read().split('\n')
c=sys.argv[2]
start=[i for i,l in enumerate(txt) if re.match(r'^\.text\..*k_coopILi8ELi6ELb1E%s'%c,l)][0]
ins=[];labels={};pend=[]
i=start+1
while i<len(txt) and not txt[i].startswith('.text.'):
    l=txt[i]
    m=re.match(r'^(\.L_x_\d+):',l)
    if m: pend.append(m.group(1))
    m=re.match(r'^\s*/\*([0-9a-f]+)\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/',l)
    if m:
        a=int(m.group(1),16); lo=int(m.group(3),16)
        hi=int(re.search(r'/\* (0x[0-9a-f]+) \*/',txt[i+1]).group(1),16)
        ctrl=hi>>41
        stall=ctrl&0xf; wait=(ctrl>>11)&0x3f
        ins.append((a,m.group(2),stall,wait))
        for p in pend: labels[p]=a
        pend=[]
    i+=1
for a,t,_,_ in ins:
    m=re.search(r'BRA\s+`\((\.L_x_\d+)\)',t)
    if m and m.group(1) in labels and labels[m.group(1)]<a:
        s=labels[m.group(1)]
        body=[x for x in ins if s<=x[0]<=a]
        if 90<len(body)<400:
            print("%s loop [%x..%x] %d instr, static stall %d cycles, %d waits"%(c,s,a,len(body),sum(x[2] for x in body),sum(1 for x in body if x[3])))
