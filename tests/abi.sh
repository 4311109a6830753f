#!/bin/sh
# abi.sh: the public surface of libtegen, from the repo root after `ninja`.
#   abi/exports   libtegen.so exports exactly the functions runtime/tegen.h
#                 declares (tools/libtegen.map lists them; keep the three equal)
#   abi/header    tegen.h compiles alone, as C and as C++, with no CUDA header
#   abi/pkgconfig build/tegen.pc gives the version in gen/gen.h and -ltegen
#   abi/needed    libtegen.so needs no libcuda (the driver is dlopened, so it loads
#                 on a machine without a GPU) and no libyaml (linked in statically)
# Prints "ok abi/NAME" or "FAIL abi/NAME: why" per check.
cd "$(dirname "$0")/.." || exit 2
so=build/libtegen.so
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL abi/$1"; fails=$((fails + 1)); }

# declared: every function name at the start of a declaration in tegen.h
sed -n 's/^[A-Za-z][A-Za-z_ ]*[ *]\(tg_[a-z0-9_]*\)(.*/\1/p' runtime/tegen.h | sort -u >"$tmp/declared"
sed -n 's/^[[:space:]]*\(tg_[a-z0-9_]*\);.*/\1/p' tools/libtegen.map | sort -u >"$tmp/mapped"
if [ ! -f $so ]; then
	bad "exports: $so is missing (run ninja)"
else
	nm -D --defined-only $so | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
	if ! cmp -s "$tmp/declared" "$tmp/exported"; then
		bad "exports: libtegen.so exports != tegen.h functions (-: declared only, +: exported only; edit tools/libtegen.map)"
		diff "$tmp/declared" "$tmp/exported" | grep '^[<>]' | sed 's/^</  -/; s/^>/  +/'
	elif ! cmp -s "$tmp/declared" "$tmp/mapped"; then
		bad "exports: tools/libtegen.map lists names tegen.h does not declare"
		diff "$tmp/declared" "$tmp/mapped" | grep '^[<>]' | sed 's/^/  /'
	else
		echo "ok abi/exports ($(wc -l <"$tmp/declared") functions)"
	fi
fi

if [ -f $so ] && command -v readelf >/dev/null 2>&1; then
	needed=$(readelf -d $so | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	case " $needed" in
	*" libcuda."* | *" libyaml"*) bad "needed: libtegen.so needs $needed (want no libcuda, no libyaml)" ;;
	*) echo "ok abi/needed ($needed)" ;;
	esac
fi

printf '#include "tegen.h"\nint main(void) { return tg_version() == 0; }\n' >"$tmp/h.c"
cc=$(sed -n 's/^cc = //p' config.ninja 2>/dev/null)
if ! ${cc:-cc} -std=c99 -pedantic -Wall -Wextra -Werror -Iruntime -fsyntax-only "$tmp/h.c" 2>"$tmp/err"; then
	bad "header: tegen.h does not compile alone as C99"
	head -5 "$tmp/err"
elif command -v c++ >/dev/null 2>&1 && ! c++ -x c++ -std=c++11 -Wall -Wextra -Werror -Iruntime -fsyntax-only "$tmp/h.c" 2>"$tmp/err"; then
	bad "header: tegen.h does not compile as C++11"
	head -5 "$tmp/err"
else
	echo "ok abi/header"
fi

want=$(sed -n 's/^#define TG_VERSION "\(.*\)"/\1/p' gen/gen.h)
if ! command -v pkg-config >/dev/null 2>&1; then
	echo "skip abi/pkgconfig: no pkg-config"
elif [ "$(PKG_CONFIG_PATH=build pkg-config --modversion tegen 2>&1)" != "$want" ] ||
	! PKG_CONFIG_PATH=build pkg-config --libs tegen | grep -q -e '-ltegen' ||
	! PKG_CONFIG_PATH=build pkg-config --static --libs tegen | grep -q -e '-lnvrtc'; then
	bad "pkgconfig: build/tegen.pc: want version $want, -ltegen and (static) -lnvrtc"
	PKG_CONFIG_PATH=build pkg-config --modversion --libs --static tegen 2>&1 | sed 's/^/  /'
else
	echo "ok abi/pkgconfig ($want)"
fi
[ $fails = 0 ]
