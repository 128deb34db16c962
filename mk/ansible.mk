# ansible.mk - `make check-ansible`: the Ansible role of contrib/ansible run
# with Debian's real ansible-playbook (tests/ansible/run.sh); its live case
# needs root (a private mount namespace).
.PHONY: check-ansible
check-ansible: $(BUILD)/memcg-policy
	tests/ansible/run.sh $(BUILD)
