"""Generates the arm64 assembly of package simd: the block formats' NEON
kernels (the files it prints, *_arm64.s in backend/simd).

Go's assembler lacks most NEON instructions (SDOT, USMMLA, SMULL, SCVTF
on vectors...): the generators write them in LLVM syntax, and llvm-mc
encodes them into WORDs, the instruction in a comment beside each; the
arguments, branches and labels stay Go assembly. Run from anywhere:

	python3 backend/simd/arm64gen/main.py [dir]

It writes the files into backend/simd, or into dir (TestArm64Generated
compares those with the checked-in ones). It needs python3 and llvm-mc
with the AArch64 target; building inferno needs neither.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kpack
import kquant
import ktile
import lmatvec
import lpack

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

for mod in (lmatvec, lpack, kquant, ktile, kpack):
    for name, text in mod.files().items():
        with open(os.path.join(OUT, name), 'w') as f:
            f.write(text)
        print(name)
