#!/bin/sh
# A worker for the tests: what it does is spelled in its brief.
brief=$(cat)
case "$brief" in
*"child"*)
	sleep 300 &
	echo "$!" > "$VIBE_TEST_CHILD_PID"
	echo "started a child"
	sleep 300
	;;
esac
case "$brief" in
*"steps"*)
	for i in 1 2 3 4 5 6; do echo "step $i ✓"; echo "note $i" >&2; sleep 0.5; done
	;;
esac
case "$brief" in
*"sleep "*)
	n=$(printf '%s\n' "$brief" | sed -n 's/.*sleep \([0-9.]*\).*/\1/p' | head -1)
	echo "working"
	sleep "$n"
	;;
esac
case "$brief" in
*"fail"*)
	echo "something broke" >&2
	exit 3
	;;
*"flood"*)
	i=0
	while [ $i -lt 3000 ]; do echo "line $i of a long report"; i=$((i+1)); done
	;;
*"json"*)
	echo '{"type":"system","model":"m-1"}'
	echo '{"type":"result","result":"all green","usage":{"input_tokens":12,"output_tokens":34},"total_cost_usd":0.25}'
	;;
*"empty"*)
	;;
*"hold"*)
	echo "held in a worktree" > held.txt
	git add held.txt && git -c user.name=w -c user.email=w@x commit -qm "worker's held change" && echo "committed held.txt"
	sleep 300
	;;
*"conflict"*)
	echo "the worker's README" > README
	git add README && git -c user.name=w -c user.email=w@x commit -qm "worker's README" && echo "committed README"
	;;
*"another"*)
	echo "another file" > another.txt
	git add another.txt && git -c user.name=w -c user.email=w@x commit -qm "another file" && echo "committed another.txt"
	;;
*"filtered"*)
	# Attributes that pick the repository's filter driver, committed
	# without running it (the worker's own git is its business).
	printf '*.dat filter=evil\n' > .gitattributes
	echo data > data.dat
	git -c filter.evil.clean= -c filter.evil.smudge= -c filter.evil.process= add .gitattributes data.dat &&
		git -c filter.evil.clean= -c filter.evil.smudge= -c filter.evil.process= -c user.name=w -c user.email=w@x commit -qm "filtered data" && echo "committed data.dat"
	;;
*"commit"*)
	echo "made in a worktree" > made.txt
	git add made.txt && git -c user.name=w -c user.email=w@x commit -qm "worker's change" && echo "committed made.txt"
	;;
*"write"*)
	echo "changed" >> README
	echo "wrote README in $(pwd)"
	;;
*)
	printf 'done (%s %s %s): %s\n' "$VIBE_WORKER_ID" "$VIBE_WORKER_LABEL" "$VIBE_WORKER_TIER" "$(printf '%s' "$brief" | tr '\n' ' ')"
	;;
esac
