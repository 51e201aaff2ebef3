classdef Counter < handle
    % COUNTER A counter that counts up.

    properties
        % The current count.
        Count = 0
    end

    methods
        function obj = Counter(start)
            % COUNTER Make a counter.
            %
            % Arguments:
            %     start: The first count.
            obj.Count = start;
        end

        function increment(obj, by)
            % INCREMENT Count up.
            %
            % Arguments:
            %     by: How much to add.
            obj.Count = obj.Count + by;
        end
    end
end
