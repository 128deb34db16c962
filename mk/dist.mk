# dist.mk - `make dist`: memcg-policy-$(VERSION).tar.gz, the source tarball
# of what is committed (git archive of HEAD), with debian/ and the RPM spec
# inside, so that `rpmbuild -ta memcg-policy-$(VERSION).tar.gz` builds it.
# Outside a git checkout, the files of the tree without build output.
DIST_NAME = memcg-policy-$(VERSION)

.PHONY: dist
dist:
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git archive --format=tar.gz --prefix=$(DIST_NAME)/ -o $(DIST_NAME).tar.gz HEAD || exit; \
		if [ -n "$$(git status --porcelain --untracked-files=no)" ]; then \
			echo "dist: note: uncommitted changes are not in the tarball" >&2; \
		fi; \
	else \
		tar --exclude='./build*' --exclude='./$(DIST_NAME).tar.gz' --transform 's|^\./|$(DIST_NAME)/|' \
			-czf $(DIST_NAME).tar.gz . || exit; \
	fi
	@echo "dist: $(DIST_NAME).tar.gz"
